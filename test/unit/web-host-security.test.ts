// The web host as a hostile page or local program meets it: real HTTP and WebSocket requests with
// forged Host, Origin and paths, against a host serving a renderer folder of the test's own.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startWebHost } from '../../electron/host/web/server.ts';

const home = mkdtempSync(join(tmpdir(), 'md-web-sec-'));
const renderer = mkdtempSync(join(tmpdir(), 'md-web-sec-renderer-'));
writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>MediaDesk</title>');
mkdirSync(join(renderer, 'assets'));
writeFileSync(join(renderer, 'assets', 'app.js'), 'export {};');
writeFileSync(join(renderer, 'assets', 'app.css'), 'body{}');
writeFileSync(join(renderer, 'assets', 'icon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
// Files a link in the renderer folder could reach: the data folder's, and any other on the disk.
const outside = mkdtempSync(join(tmpdir(), 'md-web-sec-outside-'));
writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE-SECRET');
symlinkSync(join(outside, 'secret.txt'), join(renderer, 'assets', 'leak.txt'));
symlinkSync(outside, join(renderer, 'assets', 'leakdir'));
symlinkSync(join(renderer, 'assets', 'app.css'), join(renderer, 'assets', 'alias.css'));

const host = await startWebHost({ home, env: {}, rendererDir: renderer });
afterAll(() => host.close());
const port = new URL(host.origin).port;
const cookie = `mediadesk-token-${port}=${host.token}`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTP request as it leaves a browser: the path and Host exactly as given, nothing normalized. */
function http(path: string, headers: Record<string, string> = {}, address = '127.0.0.1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens the contract socket with these headers: `open` once a command was answered, else the refusal. */
function socket(query: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws${query}`, { headers });
    ws.on('open', () => {
      ws.on('message', (m) => {
        resolve(`open:${JSON.parse(String(m)).ok}`);
        ws.close();
      });
      ws.send(JSON.stringify({ id: 1, cmd: 'settings.get', payload: {} }));
    });
    // A refused upgrade is no HTTP connection to keep alive: the host must end it, or the client
    // holds it open and the host's shutdown (Ctrl-C) waits for it.
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      const ended = new Promise<string>((done) => {
        res.socket.once('close', () => done(''));
        setTimeout(() => done(' (left open)'), 5000).unref();
      });
      res.on('end', async () =>
        resolve(`refused:${res.statusCode}${body.includes(host.token) ? ' (token in body)' : ''}${await ended}`),
      );
    });
    ws.on('error', (e) => resolve(`error:${e.message}`));
  });
}

describe('DNS rebinding: only Host 127.0.0.1:PORT or localhost:PORT is served', () => {
  it('a page of evil.example resolved to 127.0.0.1 gets neither the app, its files, the cookie nor the socket, even holding the token', async () => {
    const evil = { host: `evil.example:${port}` };
    for (const path of [
      `/?token=${host.token}`,
      '/index.html',
      '/assets/app.js',
      `/media?token=${host.token}&path=x.png`,
      `/download?token=${host.token}&path=x.csv`,
      '/healthz',
    ]) {
      const r = await http(path, evil);
      expect([path, r.status, r.headers['set-cookie'], r.body]).toEqual([
        path,
        421,
        undefined,
        '{"message":"wrong host"}',
      ]);
    }
    expect(await socket(`?token=${host.token}`, { ...evil, origin: `http://evil.example:${port}` })).toBe(
      'refused:421',
    );
    expect(await socket('', { ...evil, origin: `http://evil.example:${port}`, cookie })).toBe('refused:421');
    // Another port of ours, a name ending in ours, or no port at all are other hosts.
    for (const h of [
      '127.0.0.1',
      `127.0.0.1:${Number(port) + 1}`,
      `localhost.evil.example:${port}`,
      `0.0.0.0:${port}`,
      `[::1]:${port}`,
    ]) {
      expect((await http(`/?token=${host.token}`, { host: h })).status, h).toBe(421);
    }
  });

  it('serves the app under localhost:PORT as under 127.0.0.1:PORT', async () => {
    expect((await http(`/?token=${host.token}`, { host: `localhost:${port}` })).status).toBe(200);
    expect(
      await socket(`?token=${host.token}`, { host: `localhost:${port}`, origin: `http://localhost:${port}` }),
    ).toBe('open:true');
  });
});

describe('the socket accepts its own page only', () => {
  it("refuses any Origin but the page's own with 403, before looking at the token, and never says the token", async () => {
    const foreign = [
      `http://127.0.0.1:${Number(port) + 1}`, // another local server's page: same site, so the cookie rides along
      `https://127.0.0.1:${port}`,
      `127.0.0.1:${port}`,
      `http://localhost:${port}`, // a page under localhost is another origin than 127.0.0.1
      `http://127.0.0.1:${port}.evil.example`,
      'null', // a sandboxed frame or a file:// page
      'https://evil.example',
    ];
    for (const origin of foreign) {
      expect(await socket(`?token=${host.token}`, { origin }), origin).toBe('refused:403');
      expect(await socket('', { origin, cookie }), origin).toBe('refused:403');
      expect(await socket('?token=guess', { origin }), origin).toBe('refused:403');
    }
    expect(await socket(`?token=${host.token}`, { origin: host.origin })).toBe('open:true');
    expect(await socket('', { origin: host.origin, cookie })).toBe('open:true');
  });

  it('refuses a missing or wrong token with 401, a wrong token of the right length too, and names no token', async () => {
    const sameLength = host.token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
    for (const q of [
      '',
      '?token=',
      `?token=${sameLength}`,
      `?token=${host.token}x`,
      `?token=${host.token}&token=${host.token}`,
    ]) {
      expect(await socket(q, { origin: host.origin }), q).toBe('refused:401');
    }
    for (const path of ['/', `/?token=${sameLength}`, `/media?token=${sameLength}&path=a.png`]) {
      const r = await http(path);
      expect(r.status, path).toBe(401);
      expect(r.body).not.toContain(host.token);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
  });

  it('makes each launch a token of 192 random bits, in a form that needs no escaping in a URL', () => {
    expect(host.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(host.url).toBe(`${host.origin}/?token=${host.token}`);
  });

  it('answers unknown commands and payloads the contract refuses with why, and never repeats a refused key', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${host.token}`, { headers: { origin: host.origin } });
    const replies: Record<string, unknown>[] = [];
    ws.on('message', (m) => {
      const msg = JSON.parse(String(m));
      if (!('event' in msg)) replies.push(msg);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const key = 'sk-live-0123456789abcdef-secret';
    ws.send(JSON.stringify({ id: 1, cmd: 'no.such.command', payload: {} }));
    ws.send(JSON.stringify({ id: 2, cmd: '__proto__', payload: {} }));
    ws.send(JSON.stringify({ id: 3, cmd: 'settings.set', payload: { concurrency: 'many' } }));
    ws.send(JSON.stringify({ id: 4, cmd: 'key.set', payload: { key, also: key } }));
    ws.send(JSON.stringify({ id: 5, cmd: 'key.set', payload: { key: 12345678 } }));
    ws.send(JSON.stringify({ id: 6, cmd: 'key.set', payload: key }));
    ws.send(JSON.stringify({ id: 7, cmd: 'settings.get', payload: {} }));
    await expect.poll(() => replies.length).toBe(7);
    ws.close();
    const byId = (id: number) =>
      replies.find((r) => r.id === id) as {
        ok: boolean;
        error?: { code: string; message: string; invalid?: { field: string }[] };
      };
    expect(byId(1)).toEqual({
      id: 1,
      ok: false,
      error: { code: 'not_found', message: 'unknown command "no.such.command"' },
    });
    expect(byId(2)).toEqual({ id: 2, ok: false, error: { code: 'not_found', message: 'unknown command "__proto__"' } });
    expect(byId(3).error).toMatchObject({ code: 'invalid', invalid: [{ field: 'concurrency' }] });
    for (const id of [4, 5, 6]) expect(byId(id).error?.code, String(id)).toBe('invalid');
    expect(JSON.stringify(replies)).not.toContain(key);
    expect(byId(7).ok).toBe(true);
    // The refusals stored nothing.
    expect(await host.core.dispatch('key.status', {})).toMatchObject({
      ok: true,
      result: { set: false, fingerprint: null },
    });
  });
});

describe('security headers', () => {
  it('sends the strict CSP, nosniff, no referrer and no framing on the page, its files and refusals', async () => {
    for (const path of [`/?token=${host.token}`, '/assets/app.js', '/', '/nowhere']) {
      const h = (await http(path)).headers;
      expect(h['content-security-policy'], path).toContain("frame-ancestors 'none'");
      expect(h['content-security-policy'], path).toContain("script-src 'self';");
      expect(h['content-security-policy'], path).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(
        [h['x-content-type-options'], h['x-frame-options'], h['referrer-policy'], h['cross-origin-resource-policy']],
        path,
      ).toEqual(['nosniff', 'DENY', 'no-referrer', 'same-origin']);
    }
  });

  it("keeps the address with the token out of the browser's cache", async () => {
    const page = await http(`/?token=${host.token}`);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['set-cookie']).toEqual([`${cookie}; HttpOnly; SameSite=Strict; Path=/`]);
    expect((await http('/')).headers['cache-control']).toBe('no-store');
  });
});

describe("the renderer's files", () => {
  it('serves each built file with its own type, and no folder listing', async () => {
    const types: Record<string, string> = {
      '/assets/app.js': 'application/javascript; charset=utf-8',
      '/assets/app.css': 'text/css; charset=utf-8',
      '/assets/icon.svg': 'image/svg+xml',
      '/assets/alias.css': 'text/css; charset=utf-8',
    };
    for (const [path, type] of Object.entries(types)) {
      const r = await http(path);
      expect([path, r.status, r.headers['content-type']]).toEqual([path, 200, type]);
    }
    for (const path of ['/assets', '/assets/', '/assets/leakdir/', '/?list=1']) {
      const r = await http(path);
      expect(r.body, path).not.toMatch(/app\.js|secret\.txt/);
    }
  });

  it('never serves a file outside the renderer folder: .., encoded .., backslashes, absolute paths, links out', async () => {
    const attempts = [
      '/../../../../etc/passwd',
      '/assets/../../../../etc/passwd',
      '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/assets/..%2f..%2f..%2fetc%2fpasswd',
      '/%252e%252e/%252e%252e/etc/passwd',
      '/assets\\..\\..\\..\\etc\\passwd',
      '/assets%5c..%5c..%5c..%5cetc%5cpasswd',
      '//etc/passwd',
      '/%2fetc%2fpasswd',
      `/${join(outside, 'secret.txt')}`,
      `/..${outside}/secret.txt`,
      '/assets/leak.txt',
      '/assets/leakdir/secret.txt',
      '/assets/leakdir/../leak.txt',
    ];
    for (const path of attempts) {
      const r = await http(path);
      expect([path, r.status]).toEqual([path, 404]);
      expect(r.body, path).not.toMatch(/OUTSIDE-SECRET|root:/);
    }
  });
});

describe('binding', () => {
  it("listens on 127.0.0.1 only: ::1 and the machine's other addresses do not answer", async () => {
    expect(host.origin).toBe(`http://127.0.0.1:${port}`);
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.address !== '127.0.0.1' && !a.address.startsWith('fe80'))
      .map((a) => a!.address);
    expect(others).toContain('::1');
    for (const address of others) {
      await expect(http('/healthz', {}, address), address).rejects.toThrow(/ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH/);
    }
  });
});

describe("/download sends only files the app saved at the person's request (or results it wrote), as an attachment", () => {
  const asked = (path: string, token = host.token) =>
    http(`/download?token=${encodeURIComponent(token)}&path=${encodeURIComponent(path)}`);

  it('a team export: sent with its name, behind the token; any other file on the disk or in the data folder is refused', async () => {
    const exported = await host.core.dispatch('team.export', { what: 'members' });
    expect(exported.ok).toBe(true);
    const path = (exported as { result: { path: string } }).result.path;
    const sent = await asked(path);
    expect(sent.status).toBe(200);
    expect(sent.headers['content-disposition']).toMatch(
      /^attachment; filename="team-members-[\d-]+\.csv"; filename\*=UTF-8''team-members-[\d-]+\.csv$/,
    );
    expect(sent.headers['cache-control']).toBe('no-store');
    expect(sent.body.split('\r\n')[0]).toContain('email');
    expect((await asked(path, 'wrong')).status).toBe(401);
    expect((await http(`/download?path=${encodeURIComponent(path)}`, { cookie })).status).toBe(401);
    for (const other of [
      join(outside, 'secret.txt'),
      join(home, 'mediadesk.db'),
      `${path}/../${path.split('/').pop()}x`,
    ]) {
      const r = await asked(other);
      expect([other, r.status, r.body.includes('OUTSIDE-SECRET')]).toEqual([other, 403, false]);
    }
    // Downloaded, the host keeps no copy; a link put in its place since is not followed.
    await vi.waitFor(() => expect(existsSync(path)).toBe(false));
    symlinkSync(join(outside, 'secret.txt'), path);
    const swapped = await asked(path);
    expect([swapped.status, swapped.body.includes('OUTSIDE-SECRET')]).toEqual([403, false]);
  });

  it('a download whose hand-over folder is replaced while it is sent ends, and the host goes on serving', async () => {
    const folder = join(home, 'hand-over');
    mkdirSync(folder, { recursive: true });
    const path = join(folder, 'large-export.csv');
    // Larger than the socket's buffers: the answer cannot finish until the test reads it.
    writeFileSync(path, Buffer.alloc(32 * 1024 * 1024, 'a'));
    host.core.savedFiles.add(path);
    const received = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: `/download?token=${host.token}&path=${encodeURIComponent(path)}`,
      });
      req.on('response', (res) => {
        res.pause();
        rmSync(folder, { recursive: true, force: true });
        writeFileSync(folder, 'not a folder');
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => resolve(bytes));
        res.resume();
      });
      req.on('error', reject);
      req.end();
    });
    expect(received).toBe(32 * 1024 * 1024);
    // Its folder gone, the file cannot be removed: the log says so, nothing is thrown.
    await vi.waitFor(() =>
      expect(readFileSync(host.core.log.file, 'utf8')).toMatch(/could not remove .*large-export\.csv/),
    );
    expect((await http('/healthz')).status).toBe(200);
    rmSync(folder);
  });
});
