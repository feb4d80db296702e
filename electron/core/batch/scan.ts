import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

export interface ScannedInput {
  path: string;
  /** Folder of the input relative to the root the user chose ('' for a chosen file). */
  relDir: string;
}

export interface ScanResult {
  inputs: ScannedInput[];
  rejected: { path: string; reason: string }[];
}

/** System and hidden files never become jobs: they are not the user's media. */
const SYSTEM_NAMES = new Set(['thumbs.db', 'desktop.ini', 'ehthumbs.db', '.ds_store', '$recycle.bin', '__macosx', 'system volume information']);
export const isIgnoredName = (name: string) => name.startsWith('.') || SYSTEM_NAMES.has(name.toLowerCase()) || name.endsWith('.part');

/**
 * Walks files and folders (recursively), in a stable order. Files whose extension the tool does not
 * take are reported, not silently dropped. `exclude` keeps an output folder inside an input folder
 * from being read back as input on the next run.
 */
export async function scanInputs(roots: readonly string[], accepts: (ext: string) => boolean, exclude: readonly string[] = []): Promise<ScanResult> {
  const inputs: ScannedInput[] = [];
  const rejected: { path: string; reason: string }[] = [];
  const excluded = exclude.map((e) => resolve(e));
  const seen = new Set<string>();
  const isExcluded = (p: string) => excluded.some((e) => p === e || p.startsWith(e + sep));

  const consider = (path: string, relDir: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
    if (path.lastIndexOf('.') <= path.lastIndexOf(sep) || !accepts(ext)) rejected.push({ path, reason: `this tool does not take .${ext === path ? '' : ext} files` });
    else inputs.push({ path, relDir });
  };

  const walk = async (root: string, dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (isIgnoredName(e.name)) continue;
      const p = join(dir, e.name);
      if (isExcluded(p)) continue;
      if (e.isDirectory()) await walk(root, p);
      else if (e.isFile()) consider(p, relative(root, dir));
    }
  };

  for (const raw of roots) {
    const root = resolve(raw);
    const st = await stat(root).catch(() => null);
    if (!st) rejected.push({ path: root, reason: 'does not exist' });
    else if (st.isDirectory()) await walk(root, root);
    else if (isIgnoredName(basename(root))) rejected.push({ path: root, reason: 'is a hidden or system file' });
    else consider(root, '');
  }
  return { inputs, rejected };
}

export const folderOf = (p: string) => dirname(p);
