const WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOENT: 'it no longer exists',
  ENOTDIR: 'it no longer exists',
  EISDIR: 'it is a folder',
  ELOOP: 'it is a link that leads back to itself',
  EIO: 'input/output error',
};

/** Why a file could not be read, in words a user acts on ('permission denied'), not an errno code. */
export function fsErrorWords(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return (code && WORDS[code]) ?? code ?? (err instanceof Error ? err.message : String(err));
}

/** Why a file could not be written, with what frees the way; the code kept after the words. */
const WRITE_WORDS: Record<string, string> = {
  EACCES: 'permission denied; make the folder writable',
  EPERM: 'permission denied; make the folder writable',
  ENOSPC: 'the disk is full; free some space',
  EDQUOT: 'the disk quota is used up; free some space',
  EROFS: 'the disk is read-only; make it writable',
  ENAMETOOLONG: 'the file name is too long for the disk',
  ENOTDIR: 'part of its path is a file, not a folder',
  EISDIR: 'a folder is in the way of the file',
};
export function fsWriteWords(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code && WRITE_WORDS[code] ? `${WRITE_WORDS[code]} (${code})` : fsErrorWords(err);
}
