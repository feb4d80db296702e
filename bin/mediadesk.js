#!/usr/bin/env node
// The CLI is TypeScript run by Node 24's built-in type stripping: no build step between the
// source and the command a power user scripts against. An older Node is told so in one line.
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { nodeIsNewEnough } from './node-version.js';

/** The user's cache folder for this program (not the temp folder, which the CLI leaves as it found it). */
function cacheFolder(env = process.env) {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'MediaDesk');
  if (process.platform === 'win32')
    return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'MediaDesk', 'Cache');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mediadesk');
}

if (nodeIsNewEnough('mediadesk')) {
  // Node's own cache of stripped and compiled modules (NODE_DISABLE_COMPILE_CACHE=1 turns it off):
  // otherwise most of a short command's start-up is spent stripping the same sources again.
  module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || join(cacheFolder(), 'node-compile-cache'));
  import('../electron/host/cli/main.ts').then(async ({ runCli, stopQuietlyWhenPipeCloses }) => {
    stopQuietlyWhenPipeCloses();
    process.exitCode = await runCli(process.argv.slice(2));
  });
}
