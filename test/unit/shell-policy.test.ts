import { describe, expect, it } from 'vitest';
import { externalLink, isOwnRenderer, permissionAllowed, trustedIpcSender } from '../../electron/main/policy.ts';

/** The Electron shell's decisions, as main applies them (Electron itself cannot launch on CI). */
const built = 'file:///opt/MediaDesk/resources/app/out/renderer/index.html';
const dev = 'http://localhost:5173/';

describe('which page is ours', () => {
  it('is the built renderer file or the dev server, whatever the hash or query', () => {
    expect(isOwnRenderer(`${built}#settings`, built)).toBe(true);
    expect(isOwnRenderer('http://localhost:5173/?x=1#analytics', dev)).toBe(true);
    expect(isOwnRenderer('file:///tmp/index.html', built)).toBe(false);
    expect(isOwnRenderer('http://localhost:5174/', dev)).toBe(false);
    expect(isOwnRenderer('https://localhost:5173/', dev)).toBe(false);
    expect(isOwnRenderer('not a url', built)).toBe(false);
  });
});

describe('permissions', () => {
  it("grants our main frame copying to the clipboard and a video's fullscreen, which a deny-all handler broke", () => {
    expect(permissionAllowed('clipboard-sanitized-write', { url: `${built}#results`, mainFrame: true }, built)).toBe(
      true,
    );
    expect(permissionAllowed('fullscreen', { url: built, mainFrame: true }, built)).toBe(true);
  });

  it('refuses everything else, and everything to another page or a subframe', () => {
    for (const p of [
      'notifications',
      'media',
      'geolocation',
      'clipboard-read',
      'openExternal',
      'hid',
      'usb',
      'unknown',
    ]) {
      expect(permissionAllowed(p, { url: built, mainFrame: true }, built), p).toBe(false);
    }
    expect(permissionAllowed('clipboard-sanitized-write', { url: built, mainFrame: false }, built)).toBe(false);
    expect(
      permissionAllowed('clipboard-sanitized-write', { url: 'https://evil.example/', mainFrame: true }, built),
    ).toBe(false);
    expect(permissionAllowed('clipboard-sanitized-write', { url: undefined, mainFrame: true }, built)).toBe(false);
  });
});

describe('links opened in the OS browser', () => {
  it('only https, without credentials in the URL', () => {
    expect(externalLink('https://github.com/')).toBe('https://github.com/');
    for (const url of [
      'http://example.com/',
      'file:///etc/passwd',
      'smb://host/share',
      'ms-msdt:/id',
      'javascript:alert(1)',
      'https://user:pass@example.com/',
      'HTTPS//x',
      '',
    ]) {
      expect(externalLink(url), url).toBeNull();
    }
  });
});

describe('IPC senders', () => {
  it("accepts only our window's main frame showing our renderer", () => {
    expect(trustedIpcSender({ ourWindow: true, mainFrame: true, url: `${built}#studio` }, built)).toBe(true);
    expect(trustedIpcSender({ ourWindow: true, mainFrame: false, url: built }, built)).toBe(false);
    expect(trustedIpcSender({ ourWindow: false, mainFrame: true, url: built }, built)).toBe(false);
    expect(trustedIpcSender({ ourWindow: true, mainFrame: true, url: 'https://evil.example/' }, built)).toBe(false);
    expect(trustedIpcSender({ ourWindow: true, mainFrame: true, url: null }, built)).toBe(false);
  });
});
