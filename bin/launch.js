// Which module an entry point runs: the bundle (scripts/node-bundle.ts) when it was built from the
// sources as they are now, else a new one, built first; the TypeScript sources themselves where no
// bundler is installed. Plain JavaScript: it decides before anything is compiled.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/[\\/]$/, '');
// One folder per checkout: a copy of the project that links to this node_modules builds its own.
export const BUNDLE_FOLDER = join(ROOT, 'node_modules', '.cache', 'mediadesk-bundle', fnv1a(ROOT));
/** Files besides the bundled sources whose change makes a build stale: the builder, this file, the dependencies. */
export const BUNDLE_WATCHED = [
  'scripts/node-bundle.ts',
  'bin/launch.js',
  'package.json',
  'package-lock.json',
  'node_modules/.package-lock.json',
];

/** A short name for a path (FNV-1a, 32 bits): node:crypto would add 10 ms to every command's start. */
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** The current build's folder when every file it was built from has the time it had then, else null. */
export function freshBuild() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(BUNDLE_FOLDER, 'current.json'), 'utf8'));
    if (manifest.root !== ROOT) return null;
    for (const [file, mtime] of Object.entries(manifest.inputs))
      if (statSync(join(ROOT, file)).mtimeMs !== mtime) return null;
  } catch {
    return null;
  }
  return join(BUNDLE_FOLDER, manifest.dir);
}

/** True while a live process runs from the build in `folder` (the builder keeps such builds). */
export function inUse(folder) {
  let pids = [];
  try {
    pids = readdirSync(join(folder, 'pids'));
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch (err) {
      return err.code === 'EPERM';
    }
  });
}

/** This process runs from `folder` until it exits: recorded there, so no rebuild removes it meanwhile. */
function runFrom(folder) {
  const mark = join(folder, 'pids', String(process.pid));
  mkdirSync(join(folder, 'pids'), { recursive: true });
  writeFileSync(mark, '');
  process.once('exit', () => {
    try {
      unlinkSync(mark);
    } catch {
      // Already gone with its build.
    }
  });
}

/**
 * The URL to import for entry `name` ('cli' or 'web'): the bundle's, building it when the sources
 * changed, or `source` (the entry's TypeScript) with MEDIADESK_FROM_SOURCE=1 (stack traces that name
 * the sources), where there is no bundler (an install without devDependencies) or when the build
 * fails, which is said on stderr.
 */
export async function entryUrl(name, source) {
  if (process.env.MEDIADESK_FROM_SOURCE === '1') return source;
  for (let tries = 0; tries < 3; tries++) {
    let folder = freshBuild();
    if (!folder) {
      try {
        const { buildBundle } = await import('../scripts/node-bundle.ts');
        await buildBundle();
      } catch (err) {
        if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes("'rolldown'"))
          process.stderr.write(
            `mediadesk: running from the sources, as the bundle could not be built: ${err?.message ?? err}\n`,
          );
        return source;
      }
      folder = freshBuild();
      if (!folder) continue;
    }
    runFrom(folder);
    // A build made current and an older one removed between the read and the record: read again.
    if (existsSync(join(folder, `${name}.mjs`))) return pathToFileURL(join(folder, `${name}.mjs`)).href;
  }
  return source;
}

/** The user's cache folder for this program (not the temp folder, which the CLI leaves as it found it). */
function cacheFolder(env = process.env) {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'MediaDesk');
  if (process.platform === 'win32')
    return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'MediaDesk', 'Cache');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mediadesk');
}

/**
 * Node's own cache of compiled modules (NODE_DISABLE_COMPILE_CACHE=1 turns it off): otherwise a short
 * command spends most of its start compiling the same code again.
 */
export function useCompileCache() {
  module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || join(cacheFolder(), 'node-compile-cache'));
}
