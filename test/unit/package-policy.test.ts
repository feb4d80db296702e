import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  builderConfig,
  notarizeCredentials,
  releaseRepository,
  SHIPPED_FUSES,
  signingNotes,
} from '../../electron-builder.config.ts';
import {
  afterRendererGone,
  automaticUpdatesOff,
  CRASH_WINDOW_MS,
  rendererGoneWords,
  updatesUnavailable,
} from '../../electron/main/lifecycle-policy.ts';
import { renderIcons } from '../../scripts/icons.ts';
import { DEFAULT_SETTINGS, settingsPatchSchema } from '../../shared/settings.ts';
import { tempDir } from '../audit/helpers.ts';

const installed = { packaged: true, env: {}, autoUpdate: true };

describe('updates', () => {
  it('are looked for at start only by an installed app outside a test run, with the setting on', () => {
    expect(automaticUpdatesOff(installed)).toBeNull();
    expect(automaticUpdatesOff({ ...installed, packaged: false })).toMatch(/development build/);
    expect(automaticUpdatesOff({ ...installed, env: { CI: 'true' } })).toMatch(/test run/);
    expect(automaticUpdatesOff({ ...installed, env: { NODE_ENV: 'test' } })).toMatch(/test run/);
    expect(automaticUpdatesOff({ ...installed, env: { MEDIADESK_UPDATES: 'off' } })).toMatch(/MEDIADESK_UPDATES/);
    expect(automaticUpdatesOff({ ...installed, autoUpdate: false })).toMatch(/turned off/);
  });

  it('can still be looked for from the menu with the setting off, never in a test run or a development build', () => {
    expect(updatesUnavailable({ ...installed, autoUpdate: false })).toBeNull();
    expect(updatesUnavailable({ ...installed, env: { CI: '1' } })).not.toBeNull();
    expect(updatesUnavailable({ ...installed, packaged: false })).not.toBeNull();
  });

  it('is a setting, on by default, that takes only true or false', () => {
    expect(DEFAULT_SETTINGS.autoUpdate).toBe(true);
    expect(settingsPatchSchema.safeParse({ autoUpdate: false }).success).toBe(true);
    expect(settingsPatchSchema.safeParse({ autoUpdate: 'no' }).success).toBe(false);
  });

  it('come from the GitHub releases of the repository the release workflow runs in', () => {
    expect(releaseRepository({ GITHUB_REPOSITORY: 'acme/desk' })).toEqual({ owner: 'acme', repo: 'desk' });
    const publish = builderConfig({ GITHUB_REPOSITORY: 'acme/desk' }).publish;
    expect(publish).toEqual([{ provider: 'github', owner: 'acme', repo: 'desk', releaseType: 'release' }]);
  });
});

describe('a renderer that is gone', () => {
  it('is reloaded at once, up to three times a minute, then the user is asked', () => {
    let crashes: number[] = [];
    const decisions: string[] = [];
    for (const at of [0, 1_000, 2_000, 3_000]) {
      const next = afterRendererGone('crashed', crashes, at);
      crashes = next.recent;
      decisions.push(next.reload);
    }
    expect(decisions).toEqual(['now', 'now', 'now', 'ask']);
    // Crashes older than the window no longer count.
    expect(afterRendererGone('oom', crashes, 3_000 + CRASH_WINDOW_MS + 1).reload).toBe('now');
    expect(afterRendererGone('clean-exit', [], 0).reload).toBe('no');
    expect(rendererGoneWords('oom')).toBe("MediaDesk's window ran out of memory");
  });
});

describe('the packaging config', () => {
  it('ships the fuses the issue names and unpacks native code', () => {
    const config = builderConfig({});
    expect(config.electronFuses).toEqual(SHIPPED_FUSES);
    const shipped = Object.entries(SHIPPED_FUSES).map(([name, on]) => `${name}=${on ? 'on' : 'off'}`);
    expect(shipped.sort().join(' ')).toBe(
      'enableCookieEncryption=on enableEmbeddedAsarIntegrityValidation=on enableNodeCliInspectArguments=off ' +
        'enableNodeOptionsEnvironmentVariable=off onlyLoadAppFromAsar=on runAsNode=off',
    );
    expect(config.asarUnpack).toContain('**/*.node');
    // exiftool runs from a file: its Perl script (and the library beside it), or its .exe.
    expect(config.asarUnpack).toEqual(
      expect.arrayContaining(['node_modules/exiftool-vendored.pl/**/*', 'node_modules/exiftool-vendored.exe/**/*']),
    );
    // A top-level `files` would be a second matcher beside each platform's, taking what they leave out.
    expect(config.files).toBeUndefined();
    for (const system of [config.mac, config.win, config.linux]) expect(system?.files).toContain('out/**/*');
    expect(config.npmRebuild).toBe(false);
  });

  it('notarizes and signs only with credentials, and says so when they are absent', () => {
    expect(notarizeCredentials({})).toBeNull();
    expect(notarizeCredentials({ APPLE_ID: 'a', APPLE_APP_SPECIFIC_PASSWORD: 'b', APPLE_TEAM_ID: 'c' })).toMatch(
      /APPLE_ID/,
    );
    const unsigned = builderConfig({});
    expect(unsigned.mac).toMatchObject({ notarize: false, identity: '-', hardenedRuntime: true });
    const signed = builderConfig({ CSC_LINK: 'cert.p12', APPLE_KEYCHAIN_PROFILE: 'p' });
    expect(signed.mac).toMatchObject({ notarize: true, identity: undefined });
    expect(signingNotes({}, 'darwin').join('\n')).toMatch(/notarization: skipped/);
    expect(signingNotes({}, 'win32').join('\n')).toMatch(/signing: skipped/);
    expect(signingNotes({ WIN_CSC_LINK: 'x' }, 'win32').join('\n')).toMatch(/WIN_CSC_LINK/);
    const entitlements = readFileSync(join(import.meta.dirname, '../../resources/mac/entitlements.mac.plist'), 'utf8');
    expect(entitlements).toContain('com.apple.security.cs.allow-jit');
  });

  it('renders every platform icon from resources/icon.svg', async () => {
    const out = tempDir('md-icons-');
    try {
      const written = await renderIcons(out.dir);
      expect(written).toEqual(
        expect.arrayContaining(['icon.icns', 'icon.ico', 'icon.png', join('icons', '512x512.png')]),
      );
      expect(readFileSync(join(out.dir, 'icon.icns')).subarray(0, 4).toString('latin1')).toBe('icns');
      expect([...readFileSync(join(out.dir, 'icon.ico')).subarray(0, 4)]).toEqual([0, 0, 1, 0]);
      expect(readFileSync(join(out.dir, 'icons', '256x256.png')).readUInt32BE(16)).toBe(256);
    } finally {
      out.cleanup();
    }
  });
});
