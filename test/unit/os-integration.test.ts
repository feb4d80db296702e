import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builderConfig } from '../../electron-builder.config.ts';
import {
  desktopEntry,
  dolphinServiceMenu,
  IMAGE_EXTENSIONS,
  integrationPlan,
  linuxPaths,
  nautilusScript,
  nemoAction,
  nsisInclude,
  quickActionBundle,
  quickActionPath,
  windowsLinkKeys,
  windowsVerbKeys,
} from '../../electron/core/os-integration.ts';
import { applyIntegrationPlan, followSwitches } from '../../electron/core/os-integration-apply.ts';
import { integrationProblems } from '../../scripts/package-check.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import { tempDir } from '../audit/helpers.ts';

const tmp = tempDir('md-osint-');
afterAll(() => tmp.cleanup());
const ALL_ON = {
  osContextMenu: true,
  osSendTo: true,
  osQuickAction: true,
  osLinks: true,
};
const WIN_EXE = 'C:\\Users\\Zoë\\AppData\\Local\\Programs\\MediaDesk\\MediaDesk.exe';

/** A stand-in app that prints the arguments it was given, one a line: what each integration hands over. */
function argsPrinter(name: string): { exe: string; out: string } {
  const dir = join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, "Media Desk's app");
  const out = join(dir, 'args.txt');
  writeFileSync(exe, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${JSON.stringify(out)}\n`);
  chmodSync(exe, 0o755);
  return { exe, out };
}
const unXml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const GIVEN = ['/home/zoë/Photos/my shoot', '/tmp/a "quoted" $HOME.png', '-x.png'];

describe('Windows: verbs, the link scheme, Send To', () => {
  it('puts "Process with MediaDesk" on each image type and on folders, never a default', () => {
    const keys = windowsVerbKeys(WIN_EXE);
    expect([...IMAGE_EXTENSIONS].sort()).toEqual(['jfif', 'jpe', 'jpeg', 'jpg', 'png', 'webp']);
    for (const ext of IMAGE_EXTENSIONS) {
      const verb = keys.find(
        (k) => k.key === `Software\\Classes\\SystemFileAssociations\\.${ext}\\shell\\MediaDesk.Process`,
      );
      expect(verb?.values).toEqual({ '': 'Process with MediaDesk', Icon: `${WIN_EXE},0`, MultiSelectModel: 'Player' });
      expect(keys.find((k) => k.key === `${verb!.key}\\command`)?.values['']).toBe(`"${WIN_EXE}" -- "%1"`);
    }
    expect(
      keys.find((k) => k.key === 'Software\\Classes\\Directory\\shell\\MediaDesk.Process\\command')?.values,
    ).toEqual({
      '': `"${WIN_EXE}" -- "%1"`,
    });
    // Videos are not offered (the Studio's image tools), and no extension's own default is touched.
    expect(keys.some((k) => /\.(mp4|mov)\\/.test(k.key) || /^Software\\Classes\\\.\w+$/.test(k.key))).toBe(false);
    const link = windowsLinkKeys(WIN_EXE);
    expect(link[0]).toEqual({
      key: 'Software\\Classes\\mediadesk',
      values: { '': 'URL:MediaDesk link', 'URL Protocol': '' },
    });
    // A link is never after `--`: it would be taken as a file.
    expect(link.at(-1)?.values['']).toBe(`"${WIN_EXE}" "%1"`);
  });

  it("writes the per-user installer's include: keys and shortcut on install, all gone on uninstall", () => {
    const nsh = nsisInclude();
    expect(nsh).toContain('!macro customInstall\r\n');
    expect(nsh).toContain(
      'WriteRegStr HKCU "Software\\Classes\\SystemFileAssociations\\.png\\shell\\MediaDesk.Process\\command" "" "$\\"$INSTDIR\\${APP_EXECUTABLE_FILENAME}$\\" -- $\\"%1$\\""',
    );
    expect(nsh).toContain('WriteRegStr HKCU "Software\\Classes\\mediadesk" "URL Protocol" ""');
    expect(nsh).toContain('CreateShortCut "$SENDTO\\MediaDesk.lnk" "$INSTDIR\\${APP_EXECUTABLE_FILENAME}" "--"');
    const uninstall = nsh.slice(nsh.indexOf('!macro customUnInstall'));
    expect(uninstall).toContain('DeleteRegKey HKCU "Software\\Classes\\Directory\\shell\\MediaDesk.Process"');
    expect(uninstall).toContain('Delete "$SENDTO\\MediaDesk.lnk"');
    // One DeleteRegKey per verb and the scheme: the command keys go with their parents.
    expect(uninstall.match(/DeleteRegKey/g)).toHaveLength(IMAGE_EXTENSIONS.length + 2);
    expect(integrationProblems('win32', builderConfig({}), { nsisInclude: nsh })).toEqual([]);
  });

  it('the package check names an include without Send To or written by an older generator', () => {
    const nsh = nsisInclude().replace(/\s*CreateShortCut[^\r]*/, '');
    expect(integrationProblems('win32', builderConfig({}), { nsisInclude: nsh })).toEqual([
      'build/installer.nsh is not the one os-integration.ts makes now',
      'the installer makes no Send To shortcut',
    ]);
    expect(integrationProblems('win32', builderConfig({}), { nsisInclude: null })).toEqual([
      'build/installer.nsh (the NSIS include) was not written',
    ]);
  });

  it('a switch turned off removes its keys or shortcut; on, writes them with reg.exe', () => {
    const place = {
      system: 'win32' as const,
      exe: WIN_EXE,
      home: 'C:\\Users\\Zoë',
      appData: 'C:\\Users\\Zoë\\AppData\\Roaming',
    };
    const off = integrationPlan(place, { ...ALL_ON, osContextMenu: false, osSendTo: false });
    expect(off.filter((s) => s.integration === 'context menu')).toContainEqual({
      kind: 'run',
      command: 'reg',
      args: ['delete', 'HKCU\\Software\\Classes\\Directory\\shell\\MediaDesk.Process', '/f'],
      integration: 'context menu',
      optional: true,
    });
    expect(
      off.filter((s) => s.integration === 'context menu').every((s) => s.kind === 'run' && s.args[0] === 'delete'),
    ).toBe(true);
    expect(off.find((s) => s.integration === 'Send To')).toEqual({
      kind: 'remove',
      path: 'C:\\Users\\Zoë\\AppData\\Roaming\\Microsoft\\Windows\\SendTo\\MediaDesk.lnk',
      integration: 'Send To',
    });
    expect(off.filter((s) => s.integration === 'links')).toContainEqual({
      kind: 'run',
      command: 'reg',
      args: ['add', 'HKCU\\Software\\Classes\\mediadesk\\shell\\open\\command', '/ve', '/d', `"${WIN_EXE}" "%1"`, '/f'],
      integration: 'links',
    });
    const sendTo = integrationPlan(place, ALL_ON).find((s) => s.integration === 'Send To');
    expect(sendTo?.kind === 'run' && sendTo.args.at(-1)).toContain(
      "CreateShortcut('C:\\Users\\Zoë\\AppData\\Roaming\\Microsoft\\Windows\\SendTo\\MediaDesk.lnk')",
    );
  });
});

describe('macOS: the Finder Quick Action, the document and link types', () => {
  it('the bundle offers itself on images and folders in Finder and hands the selection over as arguments', () => {
    const { exe, out } = argsPrinter('mac');
    const bundle = quickActionBundle(exe);
    expect(Object.keys(bundle)).toEqual(['Contents/Info.plist', 'Contents/document.wflow']);
    const info = bundle['Contents/Info.plist'];
    expect(info).toContain(
      '<key>NSMenuItem</key><dict><key>default</key><string>Process with MediaDesk</string></dict>',
    );
    expect(info).toContain('<string>public.image</string><string>public.folder</string>');
    expect(info).toContain('<string>com.apple.finder</string>');
    const wflow = bundle['Contents/document.wflow'];
    expect(wflow).toContain('<key>inputMethod</key><integer>1</integer>');
    expect(wflow).toContain('<string>com.apple.Automator.servicesMenu</string>');
    // Automator runs COMMAND_STRING with the selection as "$@": run it so, with a hostile path and a name with '.
    const command = unXml(/<key>COMMAND_STRING<\/key><string>([^<]*)<\/string>/.exec(wflow)![1]);
    expect(spawnSync('/bin/sh', ['-c', command, 'sh', ...GIVEN]).status).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(['--', ...GIVEN, ''].join('\n'));
  });

  it("Info.plist's types come from the config: images as an alternate viewer, and mediadesk://", () => {
    const config = builderConfig({});
    expect(config.mac?.fileAssociations).toEqual([
      { ext: IMAGE_EXTENSIONS, name: 'Image', role: 'Viewer', rank: 'Alternate' },
    ]);
    expect(integrationProblems('darwin', config, {})).toEqual([]);
    expect(integrationProblems('darwin', { ...config, mac: { ...config.mac, protocols: [] } }, {})).toEqual([
      "Info.plist's CFBundleURLTypes lack mediadesk (mac.protocols)",
    ]);
    // NSIS would make MediaDesk every image's default: Windows has the verbs instead.
    expect(config.fileAssociations).toBeUndefined();
  });
});

describe('Linux: the .desktop entry and the file managers', () => {
  it('the entry takes files and links (%U) and lists the image types, the scheme only while links are on', () => {
    const entry = desktopEntry('/home/zoë/Apps/Media Desk.AppImage', true);
    expect(entry).toMatch(/^Exec="\/home\/zoë\/Apps\/Media Desk\.AppImage" %U$/m);
    expect(entry).toMatch(
      /^MimeType=image\/jpeg;image\/png;image\/webp;inode\/directory;x-scheme-handler\/mediadesk;$/m,
    );
    expect(desktopEntry('/opt/MediaDesk/mediadesk', false)).not.toContain('x-scheme-handler');
    expect(integrationProblems('linux', builderConfig({}), { desktopEntry: entry })).toEqual([]);
    expect(integrationProblems('linux', builderConfig({}), { desktopEntry: desktopEntry('/x', false) })).toEqual([
      "the .desktop entry's MimeType lacks x-scheme-handler/mediadesk",
    ]);
  });

  it('Nautilus runs the script with the selection; Dolphin and Nemo quote the app and pass %F after --', () => {
    const { exe, out } = argsPrinter('nautilus');
    const script = join(tmp.dir, 'nautilus-script');
    writeFileSync(script, nautilusScript(exe));
    chmodSync(script, 0o755);
    expect(spawnSync(script, GIVEN).status).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(['--', ...GIVEN, ''].join('\n'));
    const dolphin = dolphinServiceMenu('/opt/Media Desk/mediadesk');
    expect(dolphin).toContain('X-KDE-ServiceTypes=KonqPopupMenu/Plugin');
    expect(dolphin).toContain('MimeType=image/jpeg;image/png;image/webp;inode/directory;');
    expect(dolphin).toContain('Exec="/opt/Media Desk/mediadesk" -- %F');
    const nemo = nemoAction('/opt/MediaDesk/mediadesk');
    expect(nemo).toContain('Exec=/opt/MediaDesk/mediadesk -- %F');
    expect(nemo).toContain('Extensions=dir;jpg;jpeg;jpe;jfif;png;webp;');
    expect(nemo).toContain('Selection=notnone');
  });

  it('integrate writes the entry and each action, a switch off removes its own, --remove leaves nothing', async () => {
    const home = join(tmp.dir, 'home');
    const place = { system: 'linux' as const, exe: '/opt/MediaDesk/mediadesk', home };
    const paths = linuxPaths(home);
    const ran: string[] = [];
    const run = async (c: string, a: string[]) => void ran.push([c, ...a].join(' '));
    // Nothing installed yet: a switch changes nothing on disk.
    expect(await followSwitches(place, DEFAULT_SETTINGS, run)).toBeNull();
    const done = await applyIntegrationPlan(integrationPlan(place, DEFAULT_SETTINGS), run);
    expect(done.every((d) => d.ok)).toBe(true);
    for (const p of Object.values(paths)) expect(existsSync(p), p).toBe(true);
    expect(statSync(paths.nautilus).mode & 0o111).toBe(0o111);
    expect(statSync(paths.dolphin).mode & 0o111).toBe(0o111);
    expect(ran).toContain('xdg-mime default mediadesk.desktop x-scheme-handler/mediadesk');

    ran.length = 0;
    await followSwitches(place, { ...DEFAULT_SETTINGS, osContextMenu: false, osLinks: false }, run);
    expect([paths.nautilus, paths.dolphin, paths.nemo].filter((p) => existsSync(p))).toEqual([]);
    expect(readFileSync(paths.desktop, 'utf8')).not.toContain('x-scheme-handler');
    expect(ran.some((r) => r.startsWith('xdg-mime'))).toBe(false);

    await applyIntegrationPlan(integrationPlan(place, DEFAULT_SETTINGS, true), run);
    expect(Object.values(paths).filter((p) => existsSync(p))).toEqual([]);
  });

  it('a program that fails is said, and fails the step unless it was optional', async () => {
    const fail = async () => {
      throw new Error('not found');
    };
    const r = await applyIntegrationPlan(
      [
        { kind: 'run', command: 'update-desktop-database', args: ['x'], integration: 'app entry', optional: true },
        { kind: 'run', command: 'reg', args: ['add', 'HKCU\\x'], integration: 'links' },
      ],
      fail,
    );
    expect(r.map((o) => [o.ok, o.said])).toEqual([
      [true, 'app entry: update-desktop-database x: not found'],
      [false, 'links: reg add HKCU\\x: not found'],
    ]);
  });

  it('the Quick Action is one bundle in ~/Library/Services, removed whole when switched off', async () => {
    const home = join(tmp.dir, 'machome');
    const place = { system: 'darwin' as const, exe: '/Applications/MediaDesk.app/Contents/MacOS/MediaDesk', home };
    const noop = async () => {};
    await applyIntegrationPlan(integrationPlan(place, ALL_ON), noop);
    expect(existsSync(join(quickActionPath(home), 'Contents', 'document.wflow'))).toBe(true);
    await followSwitches(place, { ...ALL_ON, osQuickAction: false }, noop);
    expect(existsSync(quickActionPath(home))).toBe(false);
  });
});
