import type { UploadFailure, UploadProgress } from '../../../shared/contract/index.ts';
import { DeskError } from '../../../shared/contract/errors.ts';

/** How many failed files a note names before "and N more": enough to see a pattern, short enough to read. */
export const FAILED_SHOWN = 3;

/** "a.png: why; b/c.png: why; and 4 more": the first few failed files of a drop, for one line of text. */
export function failedText(failed: readonly UploadFailure[], shown = FAILED_SHOWN): string {
  const named = failed.slice(0, shown).map((f) => `${f.relPath}: ${f.message}`);
  if (failed.length > shown) named.push(`and ${failed.length - shown} more`);
  return named.join('; ');
}

/** "Copying 37 of 200 files…", and how many could not be, while a drop is copied. */
export function copyingText(p: UploadProgress): string {
  const settled = p.copied + p.failed;
  return `Copying ${settled} of ${p.total} file${p.total === 1 ? '' : 's'}…${p.failed ? ` (${p.failed} could not be copied)` : ''}`;
}

/**
 * Files picked or dropped loose (not a folder), ready to upload: each under its own name, a name
 * met again in a folder of its own ("2/export.json"), so two files of one name both arrive.
 */
export function looseFiles(files: readonly File[]): { file: File; relPath: string }[] {
  const seen = new Map<string, number>();
  return files.map((file) => {
    const n = (seen.get(file.name) ?? 0) + 1;
    seen.set(file.name, n);
    return { file, relPath: n > 1 ? `${n}/${file.name}` : file.name };
  });
}

/** A drop of which no file arrived: the error, with each file's own reason for screens that show them one by one. */
export class NothingCopied extends DeskError {
  readonly failed: UploadFailure[];
  constructor(failed: UploadFailure[]) {
    super('invalid', failed.length ? `No file could be copied: ${failedText(failed)}` : 'No file to copy');
    this.failed = failed;
  }
}
