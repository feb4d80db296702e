/**
 * The CLI and the web host as one bundle of their modules (rolldown), which `bin/launch.js` runs when
 * it is as new as every source it was built from. Loading some 600 modules one by one cost a fifth to
 * a third of a command's CPU (a one-image `run` 0.84 against 0.64 CPU-s, `settings get` 0.31 against
 * 0.21) and of a web host's start (bench/history/cli-startup.md, 2026-12-06).
 *
 * Each build gets a folder of its own and is made current by renaming one small file, so a process
 * that starts while another builds, or that loads a lazy chunk long after a rebuild, reads a whole build.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'rolldown';
import { BUNDLE_FOLDER, BUNDLE_WATCHED, ROOT, inUse } from '../bin/launch.js';

export interface BundleManifest {
  /** The checkout the build was made from: its source paths are written into the bundle. */
  root: string;
  /** The build's folder under BUNDLE_FOLDER. */
  dir: string;
  /**
   * Every file the build read, relative to root (our sources and the dependency lists), with its
   * modification time: any other time makes the build stale. 0 for a file changed while it was built.
   */
  inputs: Record<string, number>;
}

const ENTRIES = {
  cli: 'electron/host/cli/main.ts',
  web: 'electron/host/web/main.ts',
  embed: 'electron/host/web/embed.ts',
};

// Native modules and packages that find files beside their own (a binary, a Perl script) stay in node_modules.
const EXTERNAL = ['better-sqlite3', 'sharp', '@napi-rs/keyring', 'exiftool-vendored', 'electron', 'fsevents'];
const external = (id: string) => id.startsWith('node:') || EXTERNAL.some((p) => id === p || id.startsWith(`${p}/`));

/**
 * Records every module the build reads (a module whose exports were all inlined leaves no trace in
 * the chunks), and keeps `import.meta.url` and its kin naming the source file, so paths beside it
 * (package.json, resources, workers) resolve as from source.
 */
function sourcePaths(read: Set<string>): Plugin {
  return {
    name: 'source-paths',
    transform(code, id) {
      if (id.startsWith('\0') || !isAbsolute(id)) return null;
      read.add(id);
      if (!code.includes('import.meta.')) return null;
      return code
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(id)))
        .replaceAll('import.meta.filename', JSON.stringify(id))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(id).href));
    },
  };
}

/** Builds the bundle from the sources as they are and makes it the current one. */
export async function buildBundle(root: string = ROOT): Promise<BundleManifest> {
  mkdirSync(BUNDLE_FOLDER, { recursive: true });
  const startedAt = Date.now();
  const dir = `b-${startedAt.toString(36)}-${process.pid}`;
  const read = new Set<string>();
  await build({
    cwd: root,
    input: ENTRIES,
    platform: 'node',
    external,
    plugins: [sourcePaths(read)],
    logLevel: 'silent',
    output: {
      dir: join(BUNDLE_FOLDER, dir),
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
    },
  });
  const paths = new Set<string>(BUNDLE_WATCHED);
  for (const id of read) {
    const path = relative(root, id);
    if (!path.startsWith('..') && !path.split(sep).includes('node_modules')) paths.add(path);
  }
  const builtAt = Date.now();
  const inputs: Record<string, number> = {};
  for (const path of [...paths].sort()) {
    const mtime = statSync(join(root, path)).mtimeMs;
    inputs[path] = mtime > startedAt && mtime <= builtAt ? 0 : mtime;
  }
  const manifest: BundleManifest = { root, dir, inputs };
  const current = join(BUNDLE_FOLDER, 'current.json');
  writeFileSync(`${current}.${process.pid}`, JSON.stringify(manifest));
  renameSync(`${current}.${process.pid}`, current);
  removeOldBuilds(dir);
  return manifest;
}

/** Older builds go once no live process runs from them (each records itself in its build's `pids`). */
function removeOldBuilds(keep: string): void {
  for (const name of readdirSync(BUNDLE_FOLDER)) {
    if (!name.startsWith('b-') || name === keep) continue;
    const folder = join(BUNDLE_FOLDER, name);
    if (!inUse(folder)) rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const m = await buildBundle();
  console.log(`bundled ${Object.keys(m.inputs).length} files into ${join(BUNDLE_FOLDER, m.dir)}`);
}
