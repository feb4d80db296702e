#!/usr/bin/env node
// `npm run web`: the web host, run from its TypeScript source as the CLI is. An older Node is
// told so in one line instead of a stack trace.
import { nodeIsNewEnough } from './node-version.js';

if (nodeIsNewEnough('mediadesk web')) import('../electron/host/web/main.ts');
