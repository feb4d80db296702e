// What the data folder keeps of its web host between launches: the token (so an open tab's cookie
// still holds) and the last port. Real files in a folder of the test's own.
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accessToken, DEFAULT_WEB_PORT, portsToTry, readRecord, writeRecord } from '../../electron/host/web/launch.ts';
import { attachmentHeader } from '../../electron/host/web/server.ts';

const home = () => mkdtempSync(join(tmpdir(), 'md-web-launch-'));

describe('the access token kept in the data folder', () => {
  it('is made once, readable by its owner only, reused after, and made anew on --new-token', () => {
    const h = join(home(), 'not yet made');
    const first = accessToken(h);
    expect(first.made).toBe(true);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    if (process.platform !== 'win32') expect(statSync(join(h, 'web-token')).mode & 0o777).toBe(0o600);
    expect(accessToken(h)).toEqual({ token: first.token, made: false });
    const renewed = accessToken(h, true);
    expect([renewed.made, renewed.token === first.token]).toEqual([true, false]);
    expect(readFileSync(join(h, 'web-token'), 'utf8').trim()).toBe(renewed.token);
  });

  it('a file others can read is made private again; one that holds no token is replaced', () => {
    const h = home();
    const { token } = accessToken(h);
    if (process.platform !== 'win32') {
      chmodSync(join(h, 'web-token'), 0o644);
      expect(accessToken(h).token).toBe(token);
      expect(statSync(join(h, 'web-token')).mode & 0o777).toBe(0o600);
    }
    writeFileSync(join(h, 'web-token'), 'short\n');
    const replaced = accessToken(h);
    expect([replaced.made, replaced.token === token, replaced.token.length]).toEqual([true, false, 32]);
  });
});

describe('the port a launch tries', () => {
  it('--port alone when given; else the default whenever it is free, then the last one used, then any free port', () => {
    expect(portsToTry(5000, 6000)).toEqual([5000]);
    expect(portsToTry(0, 6000)).toEqual([0]);
    expect(portsToTry(undefined, undefined)).toEqual([DEFAULT_WEB_PORT, 0]);
    // A launch once moved off the default (it was taken) goes back to it: the README's address.
    expect(portsToTry(undefined, 6000)).toEqual([DEFAULT_WEB_PORT, 6000, 0]);
    expect(portsToTry(undefined, DEFAULT_WEB_PORT)).toEqual([DEFAULT_WEB_PORT, 0]);
  });

  it('the record keeps the port; one that is unreadable or out of range is no record', () => {
    const h = home();
    expect(readRecord(h)).toBeNull();
    writeRecord(h, { port: 40123, pid: 7, launch: 'abc' });
    expect(readRecord(h)).toEqual({ port: 40123, pid: 7, launch: 'abc' });
    writeFileSync(join(h, 'web-host.json'), '{"port": 70000}');
    expect(readRecord(h)).toBeNull();
    writeFileSync(join(h, 'web-host.json'), '{"port": 4');
    expect(readRecord(h)).toBeNull();
  });
});

describe('the name a browser download is saved under', () => {
  it('is the file name, with an ASCII stand-in and the exact name for browsers that read filename*', () => {
    expect(attachmentHeader('audit-export-2026-01-02.csv')).toBe(
      `attachment; filename="audit-export-2026-01-02.csv"; filename*=UTF-8''audit-export-2026-01-02.csv`,
    );
    expect(attachmentHeader(`café "1" l'été (2).png`)).toBe(
      `attachment; filename="caf_ _1_ l'_t_ (2).png"; filename*=UTF-8''caf%C3%A9%20%221%22%20l%27%C3%A9t%C3%A9%20%282%29.png`,
    );
  });
});
