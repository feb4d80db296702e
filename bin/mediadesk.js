#!/usr/bin/env node
// The CLI is TypeScript run by Node 24's built-in type stripping: no build step between the
// source and the command a power user scripts against. An older Node is told so in one line.
import module from 'node:module';
import { nodeIsNewEnough } from './node-version.js';

if (nodeIsNewEnough('mediadesk')) {
  // Node's own cache of stripped and compiled modules (in the OS temp folder; NODE_DISABLE_COMPILE_CACHE=1
  // turns it off): most of a short command's start-up is otherwise spent stripping the same sources again.
  module.enableCompileCache?.();
  import('../electron/host/cli/main.ts').then(async ({ runCli, stopQuietlyWhenPipeCloses }) => {
    stopQuietlyWhenPipeCloses();
    process.exitCode = await runCli(process.argv.slice(2));
  });
}
