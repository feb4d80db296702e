// `npm run web` as a person or a script starts it: the real process, its stderr read as printed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { desk, startHost, type HostHandle } from '../e2e/host.ts';

let host: HostHandle | undefined;
const homes: string[] = [];
afterEach(async () => {
  await host?.stop();
  host = undefined;
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});
const newHome = (prefix = 'md-web-start-') => {
  const h = mkdtempSync(join(tmpdir(), prefix));
  homes.push(h);
  return h;
};

describe('web host start', () => {
  it('names on stderr, once, each stored setting it does not use and why, in the words of mediadesk settings get', async () => {
    const home = newHome();
    const stored = { concurrency: 99, theme: 'dark', exportFormat: { kind: 'xlsx' } };
    writeFileSync(join(home, 'settings.json'), JSON.stringify(stored));
    host = await startHost(home, {}, 0, [], { ownProcess: true });
    const notes =
      'note: concurrency: the stored value 99 was not used (must be at most 32); the default is in use\n' +
      'note: exportFormat: the stored value {"kind":"xlsx"} was not used (not a setting of this version of MediaDesk, perhaps of a newer one); it is left in the file\n';
    await expect.poll(() => host!.stderr(), { timeout: 10_000 }).toBe(notes);
    // The screen's reads of the settings (each reads the file again) do not say them again.
    expect(await desk(host, 'settings.get')).toMatchObject({ concurrency: 4, theme: 'dark' });
    expect(await desk(host, 'settings.file')).toMatchObject({
      ignored: [{ name: 'concurrency' }, { name: 'exportFormat' }],
    });
    expect(host.stderr()).toBe(notes);
    // Said, not acted on: the file is as it was.
    expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'))).toEqual(stored);
  });

  it('says nothing on stderr when every stored value is used', async () => {
    const home = newHome();
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ concurrency: 6, theme: 'dark' }));
    host = await startHost(home, {}, 0, [], { ownProcess: true });
    await expect.poll(() => host!.output(), { timeout: 10_000 }).toContain('data folder ');
    // A command answered: the host is past its start-up lines.
    expect(await desk(host, 'settings.get')).toMatchObject({ concurrency: 6 });
    expect(host.stderr()).toBe('');
  });

  it('an unreadable settings file in a folder whose name holds control characters: the warning names it escaped, on one line', async () => {
    const home = newHome('md-web-start-\u001b[31m\n-');
    writeFileSync(join(home, 'settings.json'), '{"theme": "dark",');
    host = await startHost(home, {}, 0, [], { ownProcess: true });
    await expect
      .poll(() => host!.stderr(), { timeout: 10_000 })
      .toMatch(
        /^warning: \S*md-web-start-\\x1b\[31m\\n-\S*settings\.json is not valid JSON \(.+\); using the default settings and leaving the file as it is until a setting is saved\n$/,
      );
  });

  it.each([
    [
      'a URL without its key (an unset CI secret)',
      { MEDIADESK_API_URL: 'https://api.example.com', MEDIADESK_API_KEY: '' },
      /^mediadesk web: MEDIADESK_API_URL is set but MEDIADESK_API_KEY is empty/,
    ],
    [
      'a URL that does not parse',
      { MEDIADESK_API_URL: 'api.example.com', MEDIADESK_API_KEY: 'sandbox-owner' },
      /^mediadesk web: MEDIADESK_API_URL must be an http\(s\) URL such as https:\/\/api\.magnific\.com, got "api\.example\.com"\n$/,
    ],
    [
      'a key read with its line end',
      { MEDIADESK_API_URL: 'https://api.example.com', MEDIADESK_API_KEY: 'k\r' },
      /^mediadesk web: MEDIADESK_API_KEY holds a space, line end/,
    ],
  ])(
    'refuses to start on %s, as the CLI does: one line, exit 2, no URL printed, nothing made in the data folder',
    (_what, env, said) => {
      const home = join(newHome(), 'data');
      const r = spawnSync(process.execPath, ['electron/host/web/main.ts', '--port', '0'], {
        env: { ...process.env, MEDIADESK_HOME: home, ...env },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(said);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(existsSync(home)).toBe(false);
    },
  );
});
