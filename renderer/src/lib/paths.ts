/** Path helpers for paths the core gave us (POSIX or Windows); the renderer has no `node:path`. */
import { joinPath, sepOf } from '../../../shared/results-folder.ts';

export { joinPath, sepOf };
export const baseName = (p: string) => p.split(/[\\/]/).filter(Boolean).pop() ?? p;
export const dirName = (p: string) => {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i > 0 ? p.slice(0, i) : p;
};
/** `relDir` (the subfolder under a batch's root) with the input path's own separator, to prefix its name; '' at the root. */
export const subfolderPrefix = (input: string, relDir: string | null | undefined) =>
  relDir ? `${relDir}${sepOf(input)}` : '';
/** The deepest folder holding every one of `paths` ('' when they share none). */
export const commonDir = (paths: readonly string[]) => {
  if (!paths.length) return '';
  const split = paths.map((p) => p.split(/[\\/]/));
  const first = split[0].slice(0, -1);
  let n = 0;
  while (n < first.length && split.every((s) => s.length > n + 1 && s[n] === first[n])) n++;
  return n === 0 ? '' : paths[0].slice(0, first.slice(0, n).join('/').length);
};
/** `p` below `dir` (as commonDir gave it), in its own separators; `p` itself when not below it. */
export const relativeTo = (dir: string, p: string) =>
  dir && p.startsWith(dir) && /[\\/]/.test(p[dir.length] ?? '') ? p.slice(dir.length + 1) : p;
/** `<outDir> again <date-time>` beside `outDir`: a folder for results made anew, where the earlier ones would be skipped. */
export const againFolder = (outDir: string) =>
  joinPath(dirName(outDir), `${baseName(outDir)} again ${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}`);
