#!/usr/bin/env node
// The CLI is TypeScript run by Node 24's built-in type stripping: no build step between the
// source and the command a power user scripts against. An older Node cannot load it and would
// print a stack trace (ERR_UNKNOWN_FILE_EXTENSION); this file stays plain JavaScript that any Node
// parses (no top-level await, no recent syntax) so it can say so in one line first.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The version package.json's engines asks for (">=24"): one place to change it.
const needed = Number(/\d+/.exec(createRequire(import.meta.url)('../package.json').engines.node)[0]);
if (Number(process.versions.node.split('.')[0]) < needed) {
  const envSh = fileURLToPath(new URL('../.ci/env.sh', import.meta.url));
  process.stderr.write(`mediadesk: needs Node ${needed} or newer (this is Node ${process.versions.node}); run \`source '${envSh}'\` to put Node ${needed} first on PATH (it fetches it from the npm registry once), or install Node ${needed} LTS (README, "Two commands for a fresh machine")\n`);
  // As for any other environment the CLI cannot work in (a MEDIADESK_HOME that is a file): exit 2.
  process.exitCode = 2;
} else {
  import('../electron/host/cli/main.ts').then(async ({ runCli, stopQuietlyWhenPipeCloses }) => {
    stopQuietlyWhenPipeCloses();
    process.exitCode = await runCli(process.argv.slice(2));
  });
}
