// Run by both entry points before any TypeScript loads: an older Node cannot load the sources and
// would print a stack trace, so this stays plain JavaScript any Node parses, to say so in one line.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * True when this Node is new enough. Otherwise says so in one line on stderr, prefixed with
 * `name`, sets exit code 2 (as for any other environment the command cannot work in) and
 * returns false.
 */
export function nodeIsNewEnough(name) {
  // The version package.json's engines asks for (">=24"): one place to change it.
  const needed = Number(/\d+/.exec(createRequire(import.meta.url)('../package.json').engines.node)[0]);
  if (Number(process.versions.node.split('.')[0]) >= needed) return true;
  const envSh = fileURLToPath(new URL('../.ci/env.sh', import.meta.url));
  process.stderr.write(
    `${name}: needs Node ${needed} or newer (this is Node ${process.versions.node}); run \`source '${envSh}'\` to put Node ${needed} first on PATH (it fetches it from the npm registry once), or install Node ${needed} LTS (README, "Two commands for a fresh machine")\n`,
  );
  process.exitCode = 2;
  return false;
}
