import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `bash scripts/start.sh`, the README's start command, on a second launch with nothing changed:
 * no build, and no npm warning. It runs in a copy of the sources (this checkout's node_modules linked
 * in), so its builds never touch the out/ that other tests serve.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const COPIED = [
  '.ci',
  'scripts',
  'bin',
  'electron',
  'renderer',
  'shared',
  'resources',
  'electron.vite.config.ts',
  'svelte.config.js',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
];
const installed = join(ROOT, 'node_modules', '.package-lock.json');

const scratch = mkdtempSync(join(tmpdir(), 'md-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Whether anything under `paths` is newer than `ms` (start.sh's own test, `find -newer`). */
function newerThan(paths: string[], ms: number): boolean {
  return paths.some(
    (p) =>
      statSync(p).mtimeMs > ms ||
      (statSync(p).isDirectory() &&
        readdirSync(p, { recursive: true, withFileTypes: true }).some(
          (e) => statSync(join(e.parentPath, e.name)).mtimeMs > ms,
        )),
  );
}

function startBuildOnly() {
  const r = spawnSync('bash', ['scripts/start.sh', '--build-only'], {
    cwd: scratch,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Why these tests cannot run here, if they cannot. */
function skipReason(): string | null {
  if (process.platform === 'win32')
    return 'a bash script for Linux, macOS and WSL; on Windows the installer is the way in';
  if (!existsSync(installed)) return 'node_modules was not installed by npm ci';
  return null;
}
const skipped = skipReason();
if (skipped) console.log(`start-script: skipped, ${skipped}`);

describe.skipIf(!!skipped)('scripts/start.sh', () => {
  it('builds on a first launch (unless the build is up to date), not on a second with nothing changed, and again once a source changes', () => {
    // Timestamps kept, so the build `npm test` made just before (out/) is reused when it is up to date.
    const copy = (name: string) => {
      cpSync(join(ROOT, name), join(scratch, name), { recursive: true, preserveTimestamps: true });
      // Folders too (filling one touched it): start.sh's `find -newer` sees them.
      const dirs = statSync(join(ROOT, name)).isDirectory()
        ? readdirSync(join(ROOT, name), { recursive: true, withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => join(e.parentPath, e.name))
            .concat(join(ROOT, name))
        : [];
      for (const d of dirs) {
        const st = statSync(d);
        utimesSync(join(scratch, d.slice(ROOT.length)), st.atime, st.mtime);
      }
    };
    for (const name of COPIED) copy(name);
    if (existsSync(join(ROOT, 'out'))) copy('out');
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'));
    // Older than what is installed: start.sh must not run `npm ci` into this checkout's node_modules.
    const old = new Date(statSync(installed).mtimeMs - 60_000);
    utimesSync(join(scratch, 'package-lock.json'), old, old);

    const outputs = ['out/main/index.js', 'out/preload/index.cjs', 'out/renderer/index.html'].map((f) =>
      join(scratch, f),
    );
    const upToDate =
      outputs.every((f) => existsSync(f)) &&
      !newerThan(
        [...COPIED.filter((n) => !['.ci', 'scripts', 'bin'].includes(n)).map((n) => join(scratch, n)), installed],
        Math.min(...outputs.map((f) => statSync(f).mtimeMs)),
      );
    const first = startBuildOnly();
    expect(first.code, first.err).toBe(0);
    if (upToDate) expect([first.out, first.err]).toEqual(['', '']);
    else expect(first.err).toContain('Building MediaDesk…');
    const built = statSync(join(scratch, 'out/renderer/index.html')).mtimeMs;

    const second = startBuildOnly();
    expect([second.code, second.out, second.err]).toEqual([0, '', '']);
    expect(statSync(join(scratch, 'out/renderer/index.html')).mtimeMs).toBe(built);

    const later = new Date(Date.now() + 2000);
    utimesSync(join(scratch, 'renderer/src/App.svelte'), later, later);
    const third = startBuildOnly();
    expect(third.code, third.err).toBe(0);
    expect(third.err).toContain('Building MediaDesk…');
    expect(statSync(join(scratch, 'out/renderer/index.html')).mtimeMs).toBeGreaterThan(built);
  }, 240_000);

  it('without a display, says so (as the README does) and serves the app to the browser', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, MEDIADESK_HOME: join(scratch, 'home') };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const child = spawn('bash', ['scripts/start.sh', '--port', '0'], { cwd: scratch, env });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /http:\/\/127\.0\.0\.1:\d+\/\S*/.exec(out);
        if (m) done(m[0]);
      });
      child.once('exit', (code) => fail(new Error(`start.sh ended (${code}) before its URL: ${err}`)));
    });
    child.kill('SIGINT');
    expect(url).toContain('token=');
    expect(err).toContain('(no display here, so MediaDesk runs in your browser: open the URL below)');
    expect(err).not.toContain('Electron binary');
    await new Promise((done) => (child.exitCode === null ? child.once('exit', done) : done(null)));
  }, 60_000);

  it('runs a command in a D-Bus session with a keyring, the daemons saying nothing on its output', () => {
    const r = spawnSync('bash', ['scripts/keyring-session.sh', 'sh', '-c', 'echo "$DBUS_SESSION_BUS_ADDRESS"'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (r.error || /not found/.test(r.stderr)) {
      console.log('start-script: keyring session skipped, no dbus-run-session or gnome-keyring here');
      return;
    }
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^unix:/);
    expect(r.stderr).toBe('');
  });

  // npm 11 warns after `npm ci` about every install script package.json's allowScripts does not cover.
  it('leaves npm no install script to warn about', (ctx) => {
    const r = spawnSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0 && /unknown command/i.test(r.stderr + r.stdout)) {
      console.log('start-script: skipped, this npm has no install-scripts check (older than 11)');
      return ctx.skip();
    }
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('No packages with unreviewed install scripts.');
    expect(r.stderr).not.toMatch(/npm warn/i);
  });
});
