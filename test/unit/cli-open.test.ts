// `mediadesk open`: a real CLI process. The desktop app is stood in for by a script that records the
// argv of its second start; a running app by Electron's SingletonLock in the data folder.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'cli-open-')));
const photos = join(root, 'Летние фото');
mkdirSync(photos);
writeFileSync(join(photos, 'a b.png'), 'x');
writeFileSync(join(photos, 'notes.txt'), 'x');
const record = join(root, 'argv.json');
const app = join(root, 'mediadesk-app');
writeFileSync(
  app,
  `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`,
);
chmodSync(app, 0o755);

/** A data folder the app runs on (its lock names this host and a live process) or not. */
function home(running: boolean): string {
  const h = mkdtempSync(join(root, 'home-'));
  if (running) symlinkSync(`${hostname()}-${process.pid}`, join(h, 'SingletonLock'));
  return h;
}

describe.skipIf(process.platform === 'win32')('mediadesk open', () => {
  it('hands the files to the running app by a second start: paths absolute, --tool kept', async () => {
    const r = await runCli(['open', 'a b.png', '.', '--tool', 'upscaler-precision'], {
      env: { MEDIADESK_HOME: home(true), MEDIADESK_APP: app },
      cwd: photos,
    });
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain('Handed 2 to MediaDesk');
    expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual([
      '--tool',
      'upscaler-precision',
      '--',
      join(photos, 'a b.png'),
      photos,
    ]);
  });

  it('says the app is not running, or not installed, and exits 1', async () => {
    const off = await runCli(['open', photos], { env: { MEDIADESK_HOME: home(false), MEDIADESK_APP: app } });
    expect([off.code, off.err]).toEqual([1, expect.stringContaining('the desktop app is not running')]);
    const stale = home(false);
    symlinkSync(`${hostname()}-999999999`, join(stale, 'SingletonLock'));
    expect((await runCli(['open', photos], { env: { MEDIADESK_HOME: stale, MEDIADESK_APP: app } })).code).toBe(1);
    const none = await runCli(['open', photos], {
      env: { MEDIADESK_HOME: home(true), MEDIADESK_APP: join(root, 'nowhere') },
    });
    expect([none.code, none.err]).toEqual([
      1,
      expect.stringContaining('not installed where expected: set MEDIADESK_APP'),
    ]);
  });

  it('refuses what is not there or no tool takes, and an unknown tool, before reaching the app', async () => {
    const env = { MEDIADESK_HOME: home(true), MEDIADESK_APP: app };
    const r = await runCli(['open', 'notes.txt', 'gone.png'], { env, cwd: photos });
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${join(photos, 'notes.txt')} is not an image or video a tool takes`);
    expect(r.err).toContain(`${join(photos, 'gone.png')} does not exist`);
    const t = await runCli(['open', photos, '--tool', '<script>'], { env });
    expect([t.code, t.err]).toEqual([2, expect.stringContaining('"<script>" is not a tool of the catalogue')]);
    expect((await runCli(['open'], { env })).err).toContain('open needs at least one file or folder');
  });
});
