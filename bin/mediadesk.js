#!/usr/bin/env node
// The CLI is TypeScript, run as one bundle of its modules built from the sources when they change
// (bin/launch.js), or as the sources themselves by Node 24's type stripping where no bundler is
// installed. An older Node is told so in one line.
import { entryUrl, useCompileCache } from './launch.js';
import { nodeIsNewEnough } from './node-version.js';

if (nodeIsNewEnough('mediadesk')) {
  useCompileCache();
  const { runCli, stopQuietlyWhenPipeCloses } = await import(
    await entryUrl('cli', new URL('../electron/host/cli/main.ts', import.meta.url).href)
  );
  stopQuietlyWhenPipeCloses();
  process.exitCode = await runCli(process.argv.slice(2));
}
