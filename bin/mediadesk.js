#!/usr/bin/env node
// The CLI is TypeScript run by Node 24's built-in type stripping: no build step between the
// source and the command a power user scripts against. An older Node is told so in one line.
import { nodeIsNewEnough } from './node-version.js';

if (nodeIsNewEnough('mediadesk')) {
  import('../electron/host/cli/main.ts').then(async ({ runCli, stopQuietlyWhenPipeCloses }) => {
    stopQuietlyWhenPipeCloses();
    process.exitCode = await runCli(process.argv.slice(2));
  });
}
