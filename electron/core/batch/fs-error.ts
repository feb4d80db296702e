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
