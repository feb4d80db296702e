import { readdir, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isIgnoredName } from '../../../shared/validation/system-files.ts';
import { fsErrorWords } from './fs-error.ts';
import { nameInResults } from '../downloads/naming.ts';

export interface ScannedInput {
  path: string;
  /** Folder of the input relative to the root the user chose ('' for a chosen file). */
  relDir: string;
}

export interface ScanResult {
  inputs: ScannedInput[];
  rejected: { path: string; reason: string }[];
  /** Files reached a second time under another name (a link, a hard link): one job, not two. */
  duplicates: { path: string; reason: string }[];
  /** Results of earlier batches met in a chosen folder (known to the queue, or by name with their photo in the same chosen folder): not inputs unless chosen themselves. */
  results: { path: string; reason: string }[];
}

/** The extension of a file name, lower case, or '' when it has none (`notes`, `.profile`, `v1.0/notes`). */
export function extensionOf(path: string): string {
  const name = basename(path);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

const identity = (st: Stats) => `${st.dev}:${st.ino}`;

/**
 * Walks files and folders in a stable order, following links as a file manager does, and reports
 * (never silently drops) what is not an input: other extensions, duplicates, unreadable entries, and
 * results of earlier batches (`earlier`, or by name via `readResultName`) unless chosen themselves.
 */
export async function scanInputs(
  roots: readonly string[],
  accepts: (ext: string) => boolean,
  /** Output folders inside input folders, so results are not read back as inputs. */
  exclude: readonly string[] = [],
  earlier: ReadonlyMap<string, string> = new Map(),
  readResultName: (fileName: string) => { name: string; tool: string } | null = () => null,
): Promise<ScanResult> {
  const inputs: ScannedInput[] = [];
  const results: { path: string; reason: string }[] = [];
  const rejected: { path: string; reason: string }[] = [];
  const duplicates: { path: string; reason: string }[] = [];
  const excluded = exclude.map((e) => resolve(e));
  const excludedReal = await Promise.all(excluded.map((e) => realpath(e).catch(() => e)));
  const seenPaths = new Set<string>();
  const seenFiles = new Map<string, string>();
  const walked = new Map<string, string>();
  const isExcluded = (p: string, list: readonly string[]) => list.some((e) => p === e || p.startsWith(e + sep));

  // Files are decided after the walk, when every photo a result's name may point to is known. Each
  // is held by its identity, not its Stats: 10,000 Stats held through a walk outlived V8's young
  // generation and made it grow, ~30 MB more RSS for a 10,000-file folder (bench/history/engine-throughput.md, 2026-11-24 17:55).
  const filesFound: { path: string; id: string; relDir: string; root: string | null }[] = [];
  const photosIn = new Map<string, Map<string, string>>();
  const recordFile = (path: string, st: Stats, relDir: string, root: string | null) => {
    filesFound.push({ path, id: identity(st), relDir, root });
    if (root === null) return;
    const names = photosIn.get(root) ?? new Map<string, string>();
    photosIn.set(root, names);
    const name = nameInResults(path);
    if (!names.has(name)) names.set(name, path);
  };
  // Only beside the photo of that name: a photo merely named like a result is taken.
  const resultByName = (path: string, root: string): string | undefined => {
    const r = readResultName(basename(path));
    const photo = r && photosIn.get(root)?.get(r.name);
    return photo ? `is named as the ${r.tool} result of ${photo}; choose it itself to use it as an input` : undefined;
  };

  const sortFile = (path: string, id: string, relDir: string, root: string | null) => {
    if (seenPaths.has(path)) return;
    seenPaths.add(path);
    // A file chosen itself is taken, even where a chosen folder also holds it.
    const why = root === null || chosen.has(path) ? undefined : (earlier.get(path) ?? resultByName(path, root));
    if (why) {
      results.push({ path, reason: why });
      return;
    }
    const first = seenFiles.get(id);
    if (first !== undefined) {
      duplicates.push({ path, reason: `is the same file as ${first}` });
      return;
    }
    seenFiles.set(id, path);
    const ext = extensionOf(path);
    if (!ext)
      rejected.push({ path, reason: 'has no file extension; this tool takes image files such as .png or .jpg' });
    else if (!accepts(ext)) rejected.push({ path, reason: `this tool does not take .${ext} files` });
    else inputs.push({ path, relDir });
  };

  const walk = async (root: string, dir: string, st: Stats, viaLink = false): Promise<void> => {
    // Each folder once, by identity: a link to a parent folder (or to a folder walked already) is not entered again, and says so.
    const first = walked.get(identity(st));
    if (first !== undefined) {
      const loop = viaLink && (dir.startsWith(first + sep) || dir === first);
      duplicates.push({
        path: dir,
        reason: loop
          ? `is a link back to ${first}, a folder it is inside (a loop): not walked again`
          : `is the same folder as ${first}, walked already`,
      });
      return;
    }
    walked.set(identity(st), dir);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      rejected.push({ path: dir, reason: `this folder cannot be read (${fsErrorWords(err)})` });
      return;
    }
    // Links after the folder's own entries, so a file or folder reached both ways keeps its real name.
    entries.sort((a, b) => Number(a.isSymbolicLink()) - Number(b.isSymbolicLink()) || a.name.localeCompare(b.name));
    for (const e of entries) {
      if (isIgnoredName(e.name)) continue;
      const p = join(dir, e.name);
      if (isExcluded(p, excluded)) continue;
      let target: Stats;
      if (e.isSymbolicLink()) {
        try {
          target = await stat(p);
        } catch (err) {
          rejected.push({ path: p, reason: `is a broken link (${fsErrorWords(err)})` });
          continue;
        }
        if (target.isDirectory() && isExcluded(await realpath(p).catch(() => p), excludedReal)) continue;
      } else if (e.isDirectory() || e.isFile()) {
        try {
          target = await stat(p);
        } catch (err) {
          // Gone or unreachable since the folder was listed.
          rejected.push({ path: p, reason: `cannot be read (${fsErrorWords(err)})` });
          continue;
        }
      } else {
        rejected.push({ path: p, reason: 'is not a regular file (a device, pipe or socket)' });
        continue;
      }
      if (target.isDirectory()) await walk(root, p, target, e.isSymbolicLink());
      else if (target.isFile()) recordFile(p, target, relative(root, dir), root);
      else rejected.push({ path: p, reason: 'is not a regular file (a device, pipe or socket)' });
    }
  };

  for (const root of new Set(roots.map((r) => resolve(r)))) {
    const st = await stat(root).catch((err: unknown) => err as NodeJS.ErrnoException);
    if (st instanceof Error)
      rejected.push({
        path: root,
        reason: st.code === 'ENOENT' ? 'does not exist' : `cannot be read (${fsErrorWords(st)})`,
      });
    else if (st.isDirectory()) await walk(root, root, st);
    else if (isIgnoredName(basename(root))) rejected.push({ path: root, reason: 'is a hidden or system file' });
    else if (!st.isFile()) rejected.push({ path: root, reason: 'is not a regular file (a device, pipe or socket)' });
    else recordFile(root, st, '', null);
  }
  const chosen = new Set(filesFound.filter((m) => m.root === null).map((m) => m.path));
  for (const m of filesFound) sortFile(m.path, m.id, m.relDir, m.root);
  return { inputs, rejected, duplicates, results };
}

export const folderOf = (p: string) => dirname(p);
