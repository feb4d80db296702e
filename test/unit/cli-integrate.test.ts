// `mediadesk integrate`: a real CLI process writing into a stand-in home, honouring Settings > System.
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { linuxPaths } from '../../electron/core/os-integration.ts';
import { runCli } from '../cli.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'cli-integrate-')));
const app = join(root, 'Media Desk.AppImage');
writeFileSync(app, '#!/bin/sh\n');
chmodSync(app, 0o755);

describe.skipIf(process.platform !== 'linux')('mediadesk integrate (Linux)', () => {
  it('writes the entry and the file-manager actions, skips those switched off, and --remove takes all away', async () => {
    const home = mkdtempSync(join(root, 'home-'));
    const data = mkdtempSync(join(root, 'data-'));
    const env = { HOME: home, MEDIADESK_HOME: data, MEDIADESK_APP: app };
    const paths = linuxPaths(home);
    const set = await runCli(['settings', 'set', 'osLinks=false'], { env });
    expect(set.code).toBe(0);
    const r = await runCli(['integrate'], { env });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`context menu: wrote ${paths.nemo}`);
    expect(readFileSync(paths.desktop, 'utf8')).toContain(`Exec="${app}" %U`);
    expect(readFileSync(paths.desktop, 'utf8')).not.toContain('x-scheme-handler/mediadesk');
    expect(readFileSync(paths.nautilus, 'utf8')).toContain(`exec '${app}' -- "$@"`);

    await runCli(['settings', 'set', 'osContextMenu=false'], { env });
    expect((await runCli(['integrate'], { env })).out).toContain(`context menu: removed ${paths.dolphin}`);
    expect(existsSync(paths.nautilus)).toBe(false);

    const gone = await runCli(['integrate', '--remove'], { env });
    expect(gone.code).toBe(0);
    expect(Object.values(paths).filter((p) => existsSync(p))).toEqual([]);
  });

  it('says where the app must be, and refuses arguments', async () => {
    const env = { HOME: root, MEDIADESK_HOME: mkdtempSync(join(root, 'data-')), MEDIADESK_APP: join(root, 'nowhere') };
    const r = await runCli(['integrate'], { env });
    expect([r.code, r.err]).toEqual([1, expect.stringContaining('set MEDIADESK_APP to its executable')]);
    const bad = await runCli(['integrate', 'now'], { env });
    expect([bad.code, bad.err]).toEqual([2, expect.stringContaining('integrate takes no arguments')]);
  });
});
