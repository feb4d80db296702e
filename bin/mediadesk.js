#!/usr/bin/env node
// The CLI is TypeScript run by Node 24's built-in type stripping: no build step between the
// source and the command a power user scripts against.
import { runCli, stopQuietlyWhenPipeCloses } from '../electron/host/cli/main.ts';

stopQuietlyWhenPipeCloses();
process.exitCode = await runCli(process.argv.slice(2));
