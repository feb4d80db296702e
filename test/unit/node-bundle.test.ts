import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliRun } from '../cli.ts';
import { until } from '../wait.ts';

// bin/launch.js in a checkout of its own: the real launcher and builder over a two-file CLI, with the
// project's installed packages, so a test can change a source, remove the bundler or break a file.
const ROOT = resolve(import.meta.dirname, '../..');
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function checkout({ bundler = true } = {}) {
  // The real path, as Node names a module it loads (macOS's temp folder is behind /var -> /private/var).
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'md-bundle-')));
  made.push(root);
  for (const f of [
    'bin/launch.js',
    'bin/mediadesk.js',
    'bin/web.js',
    'bin/node-version.js',
    'scripts/node-bundle.ts',
  ]) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(root, f));
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module', engines: { node: '>=24' } }));
  writeFileSync(join(root, 'package-lock.json'), '{}');
  // The installed packages one by one, so node_modules/.cache is this checkout's own.
  mkdirSync(join(root, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name.startsWith('.') || (!bundler && (name === 'rolldown' || name === '@rolldown'))) continue;
    // A junction on Windows, which needs no privilege; other systems ignore the type.
    symlinkSync(join(ROOT, 'node_modules', name), join(root, 'node_modules', name), 'junction');
  }
  writeFileSync(join(root, 'node_modules', '.package-lock.json'), '{}');
  const cli = join(root, 'electron/host/cli');
  mkdirSync(cli, { recursive: true });
  mkdirSync(join(root, 'electron/host/web'), { recursive: true });
  writeFileSync(join(root, 'electron/host/web/main.ts'), "console.log('web');\n");
  writeFileSync(join(root, 'electron/host/web/embed.ts'), 'export const startWebHost = () => {};\n');
  writeFileSync(
    join(cli, 'main.ts'),
    [
      "import { word } from './word.ts';",
      'export const stopQuietlyWhenPipeCloses = () => {};',
      'export async function runCli(args: string[]): Promise<number> {',
      '  console.log(`${word} from ${import.meta.filename}`);',
      "  if (args[0] === 'wait') await new Promise((r) => process.stdin.once('data', r));",
      '  return 0;',
      '}',
    ].join('\n'),
  );
  let edits = 0;
  const setWord = (w: string) => {
    writeFileSync(join(cli, 'word.ts'), `export const word: string = '${w}';\n`);
    // A time of its own for each edit, however coarse the file system's clock.
    const at = new Date(Date.now() - 60_000 + ++edits * 1000);
    utimesSync(join(cli, 'word.ts'), at, at);
  };
  setWord('one');
  // Where this checkout's launcher keeps its builds, as it says itself.
  const { BUNDLE_FOLDER: cache } = (await import(pathToFileURL(join(root, 'bin/launch.js')).href)) as {
    BUNDLE_FOLDER: string;
  };
  const builds = () => (existsSync(cache) ? readdirSync(cache).filter((n) => n.startsWith('b-')) : []);
  const current = () => JSON.parse(readFileSync(join(cache, 'current.json'), 'utf8')) as { dir: string; root: string };
  return { root, cli, cache, setWord, builds, current };
}

function run(root: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [join(root, 'bin/mediadesk.js'), ...args], {
    env: { ...process.env, MEDIADESK_FROM_SOURCE: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const r = { out: '', err: '', child, exit: null as unknown as Promise<CliRun> };
  child.stdout.on('data', (d) => (r.out += d));
  child.stderr.on('data', (d) => (r.err += d));
  r.exit = new Promise((res) => child.once('exit', (code) => res({ code, out: r.out, err: r.err })));
  return r;
}

describe('bin/launch.js: the CLI from its bundle', () => {
  it('builds on the first call, runs the same build while nothing changed, and again once a source did', async () => {
    const c = await checkout();
    const first = await run(c.root).exit;
    expect(first).toMatchObject({ code: 0, err: '' });
    // The bundle runs, and import.meta still names the source file.
    expect(first.out).toBe(`one from ${join(c.cli, 'main.ts')}\n`);
    const [build] = c.builds();
    expect(c.current()).toMatchObject({ dir: build, root: c.root });
    expect(existsSync(join(c.cache, build, 'cli.mjs'))).toBe(true);
    expect(c.cache.startsWith(join(c.root, 'node_modules', '.cache'))).toBe(true);

    expect((await run(c.root).exit).out).toMatch(/^one /);
    expect(c.builds()).toEqual([build]);

    c.setWord('two');
    expect((await run(c.root).exit).out).toMatch(/^two /);
    expect(c.builds()).toHaveLength(1);
    expect(c.current().dir).not.toBe(build);
  });

  it('keeps a build while a process runs from it, and removes it at a rebuild after that process ended', async () => {
    const c = await checkout();
    const long = run(c.root, ['wait']);
    await until(() => long.out.startsWith('one '), { what: 'the first command to run', log: () => long.err });
    const [old] = c.builds();

    c.setWord('two');
    expect((await run(c.root).exit).out).toMatch(/^two /);
    expect(c.builds()).toContain(old);

    long.child.stdin.end('go\n');
    expect((await long.exit).code).toBe(0);
    c.setWord('three');
    expect((await run(c.root).exit).out).toMatch(/^three /);
    expect(c.builds()).not.toContain(old);
    expect(c.builds()).toHaveLength(1);
  });

  it('runs the sources with MEDIADESK_FROM_SOURCE=1, building nothing', async () => {
    const c = await checkout();
    const r = await run(c.root, [], { MEDIADESK_FROM_SOURCE: '1' }).exit;
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe(`one from ${join(c.cli, 'main.ts')}\n`);
    expect(c.builds()).toEqual([]);
  });

  it('runs the sources without a word where the bundler is not installed', async () => {
    const c = await checkout({ bundler: false });
    const r = await run(c.root).exit;
    expect(r).toMatchObject({ code: 0, err: '', out: `one from ${join(c.cli, 'main.ts')}\n` });
    expect(c.builds()).toEqual([]);
  });

  it('says why it runs the sources when the bundle cannot be built', async () => {
    const c = await checkout();
    writeFileSync(join(c.cli, 'main.ts'), "import { word } from './missing.ts';\nconsole.log(word);\n");
    const r = await run(c.root).exit;
    expect(r.err).toMatch(/^mediadesk: running from the sources, as the bundle could not be built: [^]*missing\.ts/);
    // Then Node's own error for the same file, from the sources.
    expect(r.err).toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
    expect(r.code).not.toBe(0);
    expect(c.builds()).toEqual([]);
  });
});
