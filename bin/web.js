#!/usr/bin/env node
// `npm run web`: the web host, run from its bundle or its TypeScript sources as the CLI is
// (bin/launch.js). An older Node is told so in one line instead of a stack trace.
import { entryUrl, useCompileCache } from './launch.js';
import { nodeIsNewEnough } from './node-version.js';

if (nodeIsNewEnough('mediadesk web')) {
  useCompileCache();
  await import(await entryUrl('web', new URL('../electron/host/web/main.ts', import.meta.url).href));
}
