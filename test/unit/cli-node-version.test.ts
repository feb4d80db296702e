import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type CliRun } from '../cli.ts';

// The Node a user meets first: the system's. This machine's is older than 24 (Debian's 20), which
// cannot load the TypeScript sources; elsewhere it may be missing or new enough, and the case says so.
const SYSTEM_NODE = '/usr/bin/node';
const ROOT = resolve(import.meta.dirname, '../..');
const needed = Number(
  /\d+/.exec(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node,
  )![0],
);
const systemVersion = existsSync(SYSTEM_NODE)
  ? execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()
  : null;
const old = systemVersion !== null && Number(systemVersion.split('.')[0]) < needed;
const why =
  systemVersion === null
    ? `${SYSTEM_NODE} does not exist here`
    : `${SYSTEM_NODE} is Node ${systemVersion}, not older than ${needed}`;
if (!old) console.log(`cli-node-version: skipped, ${why}: no older Node to run the CLI with`);

/** `cmd args…` to its exit, with the system's folder first on PATH: `node` there is the old one. */
function run(cmd: string, args: string[]): Promise<CliRun> {
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, PATH: `${dirname(SYSTEM_NODE)}:${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err })));
}

const line = (version: string, name = 'mediadesk') =>
  `${name}: needs Node ${needed} or newer (this is Node ${version}); run \`source '${join(ROOT, '.ci/env.sh')}'\` to put Node ${needed} first on PATH (it fetches it from the npm registry once), or install Node ${needed} LTS (README, "Two commands for a fresh machine")\n`;

describe.skipIf(!old)(
  old
    ? `mediadesk on ${SYSTEM_NODE}, Node ${systemVersion}`
    : `mediadesk on a Node older than ${needed} (skipped: ${why})`,
  () => {
    it('says in one line which Node it needs and how to get it, exit 2: no ERR_UNKNOWN_FILE_EXTENSION stack trace', async () => {
      for (const args of [['--help'], ['audit', 'query'], []]) {
        const r = await run(SYSTEM_NODE, [BIN, ...args]);
        expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', line(systemVersion!)]);
      }
    });

    // `npm run cli` is `node bin/mediadesk.js`, whichever node is first on PATH.
    it.skipIf(!existsSync(join(dirname(SYSTEM_NODE), 'npm')))('npm run cli under it says the same', async () => {
      const r = await run(join(dirname(SYSTEM_NODE), 'npm'), ['run', '--silent', 'cli', '--', '--help']);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toContain(line(systemVersion!));
      expect(r.err).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
    });

    // `npm run web` is `node bin/web.js`: the web host's sources are TypeScript too.
    it('the web host (bin/web.js, npm run web) says the same in one line, exit 2, and starts nothing', async () => {
      const r = await run(SYSTEM_NODE, [join(ROOT, 'bin/web.js'), '--port', '0']);
      expect([r.code, r.out, r.err]).toEqual([2, '', line(systemVersion!, 'mediadesk web')]);
    });
  },
);
