/** Path helpers for paths the core gave us (POSIX or Windows); the renderer has no `node:path`. */
export const sepOf = (p: string) => (/^[A-Za-z]:\\|\\\\/.test(p) || (p.includes('\\') && !p.includes('/')) ? '\\' : '/');
export const joinPath = (base: string, ...parts: string[]) => {
  const sep = sepOf(base);
  return [base.replace(/[\\/]+$/, ''), ...parts.map((p) => p.replace(/[\\/]+/g, sep))].join(sep);
};
export const baseName = (p: string) => p.split(/[\\/]/).filter(Boolean).pop() ?? p;
export const dirName = (p: string) => {
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i > 0 ? p.slice(0, i) : p;
};
/** `relDir` (the subfolder under a batch's root) with the input path's own separator, to prefix its name; '' at the root. */
export const subfolderPrefix = (input: string, relDir: string | null | undefined) => (relDir ? `${relDir}${sepOf(input)}` : '');
