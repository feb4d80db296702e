import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startWebHost } from '../../electron/host/web/server.ts';
import { DropNames } from '../../electron/host/web/drop-names.ts';
import { nestsDeeper } from '../../electron/host/web/message.ts';
import { MAX_MESSAGE_BYTES, overLimit, PRESET_TEXT_MAX_CHARS } from '../../shared/socket-limit.ts';
import { deepEventLine, makeEvent, rowOf } from '../audit/helpers.ts';

const home = mkdtempSync(join(tmpdir(), 'md-web-'));
const host = await startWebHost({ home, env: {} });
afterAll(() => host.close());
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe('web host file routes', () => {
  it('only binds 127.0.0.1 and refuses a foreign Host header (DNS rebinding)', async () => {
    expect(host.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // fetch() may not set Host, so speak HTTP directly as a rebinding page's browser would.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${host.origin}/healthz`, { headers: { host: 'evil.example' } }, (res) =>
        resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
    expect((await fetch(`${host.origin}/healthz`)).status).toBe(200);
  });

  it('uploads a dropped file into the inbox keeping its relative path, then serves it as media', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const up = await fetch(
      `${host.origin}/upload?${q({ token: host.token, drop: 'drop123abc', rel: 'shoot/day1/a.png' })}`,
      { method: 'PUT', body: png },
    );
    expect(up.status).toBe(200);
    const { path, folder } = (await up.json()) as { path: string; folder: string };
    expect(path).toBe(join(home, 'inbox', 'drop123abc', 'shoot', 'day1', 'a.png'));
    expect(folder).toBe(join(home, 'inbox', 'drop123abc'));

    const media = await fetch(`${host.origin}/media?${q({ token: host.token, path })}`);
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await media.arrayBuffer()).equals(png)).toBe(true);

    const thumb = await host.core.dispatch('media.thumbnail', { path, size: 32 });
    expect(thumb.ok).toBe(true);
    const meta = await sharp((thumb as { result: { path: string } }).result.path).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 32, 24]);
  });

  it('a 404 never repeats the query, which holds the token; a file gone between the gate and its sending is said as the gate says it', async () => {
    const unknown = await fetch(`${host.origin}/nothing-here?${q({ token: host.token })}`);
    expect(unknown.status).toBe(404);
    const said = await unknown.text();
    expect(said).not.toContain(host.token);
    expect(JSON.parse(said)).toEqual({ message: 'GET /nothing-here not found' });

    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c63' } })
      .png()
      .toBuffer();
    const up = await fetch(`${host.origin}/upload?${q({ token: host.token, drop: 'drop404abc', rel: 'gone.png' })}`, {
      method: 'PUT',
      body: png,
    });
    const { path } = (await up.json()) as { path: string };
    // Deleted right after the gate let it through, as a person deleting it while it is opened would.
    const gate = host.core.media;
    const check = gate.check.bind(gate);
    const deleting = vi.spyOn(gate, 'check').mockImplementation((p) => {
      const real = check(p);
      rmSync(real);
      return real;
    });
    try {
      const gone = await fetch(`${host.origin}/media?${q({ token: host.token, path })}`);
      expect(gone.status).toBe(404);
      const text = await gone.text();
      expect(text).not.toContain(host.token);
      expect(JSON.parse(text)).toEqual({ message: `${path} does not exist` });
    } finally {
      deleting.mockRestore();
    }
  });

  it('stores each dropped file byte for byte whatever type the browser gives it: JSON, text, and a .json file that is not JSON', async () => {
    const files = [
      {
        rel: 'export.json',
        type: 'application/json',
        body: JSON.stringify([{ event_id: 'evt_1' }, { event_id: 'evt_2' }]),
      },
      { rel: 'notes.txt', type: 'text/plain', body: 'a line\nanother\n' },
      { rel: 'broken.json', type: 'application/json', body: '{"event_id": "evt_3", "date": ' },
      { rel: 'form.csv', type: 'application/x-www-form-urlencoded', body: 'a=1&b=2' },
    ];
    for (const f of files) {
      const up = await fetch(`${host.origin}/upload?${q({ token: host.token, drop: 'droptypes1', rel: f.rel })}`, {
        method: 'PUT',
        headers: { 'content-type': f.type },
        body: f.body,
      });
      expect(up.status, f.rel).toBe(200);
      const { path } = (await up.json()) as { path: string };
      expect(readFileSync(path, 'utf8'), f.rel).toBe(f.body);
    }
  });

  it('refuses a second file of the same path in one drop, and keeps the first', async () => {
    const url = `${host.origin}/upload?${q({ token: host.token, drop: 'droptwice1', rel: 'a.txt' })}`;
    expect((await fetch(url, { method: 'PUT', body: 'first' })).status).toBe(200);
    const again = await fetch(url, { method: 'PUT', body: 'second' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { message: string }).message).toBe(
      'a file of this path was already copied in this drop',
    );
    expect(readFileSync(join(home, 'inbox', 'droptwice1', 'a.txt'), 'utf8')).toBe('first');
  });

  describe('names a dropped file cannot keep on every system', () => {
    const put = async (drop: string, rel: string, body: string) => {
      const res = await fetch(`${host.origin}/upload?${q({ token: host.token, drop, rel })}`, { method: 'PUT', body });
      return { status: res.status, ...((await res.json()) as { path?: string; message?: string }) };
    };
    const stored = (drop: string) =>
      readdirSync(join(home, 'inbox', drop), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) =>
          relative(join(home, 'inbox', drop), join(e.parentPath, e.name))
            .split(sep)
            .join('/'),
        )
        .sort();

    it('stores Windows device names, refused characters and trailing dots or spaces under portable names, keeping the extension', async () => {
      const sent = {
        'con.jpg': 'con_.jpg',
        'a:b.png': 'a_b.png',
        'trailing. ': 'trailing',
        'shoot?/AUX .PNG': 'shoot_/AUX_ .PNG',
        'nul/x.png': 'nul_/x.png',
      };
      for (const [rel, want] of Object.entries(sent)) {
        const up = await put('dropport1', rel, `bytes of ${rel}`);
        expect([up.status, up.path], rel).toEqual([200, join(home, 'inbox', 'dropport1', ...want.split('/'))]);
        expect(readFileSync(up.path!, 'utf8')).toBe(`bytes of ${rel}`);
      }
      expect(stored('dropport1')).toEqual(Object.values(sent).sort());
    });

    it('keeps two files whose names are one file on macOS and Windows under two names, also sent side by side; the same name twice is still refused', async () => {
      const [a, b] = await Promise.all([
        put('dropcase1', 'Photo.JPG', 'first'),
        put('dropcase1', 'photo.jpg', 'second'),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([readFileSync(a.path!, 'utf8'), readFileSync(b.path!, 'utf8')]).toEqual(['first', 'second']);
      expect(
        stored('dropcase1')
          .map((n) => n.toLowerCase())
          .sort(),
      ).toEqual(['photo-2.jpg', 'photo.jpg']);

      // Two names made one by portableName: the second is numbered too; a name sent again is the same file again.
      expect((await put('dropcase1', 'a:b.png', 'colon')).path).toBe(join(home, 'inbox', 'dropcase1', 'a_b.png'));
      expect((await put('dropcase1', 'A_B.png', 'underscore')).path).toBe(
        join(home, 'inbox', 'dropcase1', 'A_B-2.png'),
      );
      expect(await put('dropcase1', 'a:b.png', 'again')).toMatchObject({
        status: 409,
        message: 'a file of this path was already copied in this drop',
      });
      expect(readFileSync(join(home, 'inbox', 'dropcase1', 'a_b.png'), 'utf8')).toBe('colon');
    });

    it('shortens a name too long for the disk, keeping its extension, and two long names alike stay two files', async () => {
      const long = 'é'.repeat(148); // 296 bytes, and .png
      const [a, b] = [await put('droplong1', `${long}1.png`, 'one'), await put('droplong1', `${long}2.png`, 'two')];
      expect([a.status, b.status]).toEqual([200, 200]);
      const names = stored('droplong1');
      expect(names).toHaveLength(2);
      for (const n of names)
        expect([Buffer.byteLength(n) <= 255, n.endsWith('.png'), n.startsWith('é'.repeat(50))]).toEqual([
          true,
          true,
          true,
        ]);
      expect([readFileSync(a.path!, 'utf8'), readFileSync(b.path!, 'utf8')]).toEqual(['one', 'two']);
    });

    it('after a restart, a file of a drop in another case than one copied before is numbered, not stored beside it; one sent again is still refused', async () => {
      const again = mkdtempSync(join(tmpdir(), 'md-web-restart-'));
      const first = await startWebHost({ home: again, env: {} });
      const putTo = async (h: typeof first, rel: string, body: string) => {
        const res = await fetch(`${h.origin}/upload?${q({ token: h.token, drop: 'droprestart1', rel })}`, {
          method: 'PUT',
          body,
        });
        return { status: res.status, ...((await res.json()) as { path?: string; message?: string }) };
      };
      const inbox = join(again, 'inbox', 'droprestart1');
      try {
        expect((await putTo(first, 'shoot/Photo.JPG', 'before')).status).toBe(200);
        expect((await putTo(first, 'a:b.png', 'colon')).status).toBe(200);
      } finally {
        await first.close();
      }
      const second = await startWebHost({ home: again, env: {} });
      try {
        expect((await putTo(second, 'Shoot/photo.jpg', 'after')).path).toBe(join(inbox, 'Shoot', 'photo-2.jpg'));
        expect((await putTo(second, 'A_B.png', 'underscore')).path).toBe(join(inbox, 'A_B-2.png'));
        expect(await putTo(second, 'shoot/Photo.JPG', 'again')).toMatchObject({
          status: 409,
          message: 'a file of this path was already copied in this drop',
        });
      } finally {
        await second.close();
      }
      const names = readdirSync(inbox, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(inbox, join(e.parentPath, e.name)).split(sep).join('/'))
        .sort();
      expect(names).toEqual(['A_B-2.png', 'Shoot/photo-2.jpg', 'a_b.png', 'shoot/Photo.JPG']);
      expect(readFileSync(join(inbox, 'shoot', 'Photo.JPG'), 'utf8')).toBe('before');
    });

    it('a drop met again after its names were forgotten (an idle hour) reads them from its folder', () => {
      const inbox = mkdtempSync(join(tmpdir(), 'md-drop-idle-'));
      const names = new DropNames(inbox);
      const copy = (rel: string) => {
        const t = names.take('dropidle1', rel.split('/'));
        if ('status' in t) return t;
        mkdirSync(join(inbox, 'dropidle1', ...t.parts.slice(0, -1)), { recursive: true });
        writeFileSync(join(inbox, 'dropidle1', ...t.parts), rel);
        t.settle(true);
        return t.parts.join('/');
      };
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        expect(copy('Photo.JPG')).toBe('Photo.JPG');
        vi.setSystemTime(Date.now() + 61 * 60 * 1000);
        expect(copy('photo.jpg')).toBe('photo-2.jpg');
        expect(copy('PHOTO.jpg')).toBe('PHOTO-3.jpg');
      } finally {
        vi.useRealTimers();
      }
    });

    it('on Windows, a path longer than 259 characters is refused, naming the file and the path it would have had; elsewhere it is stored', () => {
      const inbox = mkdtempSync(join(tmpdir(), 'md-drop-win-'));
      const rel = ['f'.repeat(120), 'g'.repeat(120), 'photo.png'];
      const dest = join(inbox, 'dropwin1', ...rel);
      expect(dest.length).toBeGreaterThan(259);
      const fits = ['f'.repeat(120), 'photo.png'];
      const win = new DropNames(inbox, 'win32');
      expect(win.take('dropwin1', rel)).toEqual({
        status: 400,
        message: `"photo.png" cannot be stored: ${dest} would be ${dest.length} characters long, more than the 259 Windows allows in a path; Explorer and most programs could not open it; drop it from a folder with fewer or shorter folder names, or shorten its name`,
      });
      expect(win.take('dropwin1', fits)).toMatchObject({ parts: fits });
      expect(new DropNames(inbox, 'linux').take('dropwin1', rel)).toMatchObject({ parts: rel });
    });

    it('keeps a hidden or system name one, and refuses a name that would become one, naming it; a path too deep for the disk is refused', async () => {
      expect((await put('dropjunk1', '._img-00.png', 'apple double')).path).toBe(
        join(home, 'inbox', 'dropjunk1', '._img-00.png'),
      );
      expect((await put('dropjunk1', 'sub/.DS_Store', 'finder')).path).toBe(
        join(home, 'inbox', 'dropjunk1', 'sub', '.DS_Store'),
      );
      expect(await put('dropjunk1', 'Thumbs.db.', 'x')).toEqual({
        status: 400,
        message:
          '"Thumbs.db." would be stored as "Thumbs.db", the name of a hidden or system file that batches pass over; rename it',
      });
      expect(await put('dropjunk1', ' desktop.ini/a.png', 'x')).toMatchObject({
        status: 400,
        message: expect.stringContaining('" desktop.ini" would be stored as "desktop.ini"'),
      });
      expect(stored('dropjunk1')).toEqual(['._img-00.png', 'sub/.DS_Store']);

      const deep = Array.from({ length: 20 }, (_, i) => `${'d'.repeat(230)}${i}`).join('/');
      expect(await put('dropjunk1', `${deep}/a.png`, 'x')).toMatchObject({
        status: 400,
        message: 'the file name is too long for the disk (ENAMETOOLONG)',
      });
      expect(await put('dropjunk1', 'sub/.DS_Store/a.png', 'x')).toMatchObject({
        status: 409,
        message: 'part of its path is a file, not a folder (ENOTDIR)',
      });
      expect(stored('dropjunk1')).toEqual(['._img-00.png', 'sub/.DS_Store']);
    });
  });

  it('removes the part of a file whose upload broke off, so the drop holds no half file and the same path can be sent again', async () => {
    const url = `${host.origin}/upload?${q({ token: host.token, drop: 'dropcut123', rel: 'shoot/big.png' })}`;
    const dest = join(home, 'inbox', 'dropcut123', 'shoot', 'big.png');
    // The browser promised a megabyte, sends 64 KiB, and goes away (a tab closed, a file that stopped reading).
    const req = request(url, { method: 'PUT', headers: { 'content-length': String(1024 * 1024) } });
    req.on('error', () => {});
    req.write(Buffer.alloc(64 * 1024, 7));
    await expect.poll(() => existsSync(dest) && statSync(dest).size > 0, { timeout: 5000 }).toBe(true);
    req.destroy();
    await expect.poll(() => existsSync(dest), { timeout: 5000 }).toBe(false);

    const whole = await fetch(url, { method: 'PUT', body: 'the whole file' });
    expect(whole.status).toBe(200);
    expect(readFileSync(dest, 'utf8')).toBe('the whole file');
  });

  it("refuses uploads that climb out of the inbox, and media without the token or outside the app's folders", async () => {
    const bad = await fetch(
      `${host.origin}/upload?${q({ token: host.token, drop: 'drop123abc', rel: '../../escape.png' })}`,
      { method: 'PUT', body: 'x' },
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/not a relative file path/);
    expect(
      (await fetch(`${host.origin}/upload?${q({ drop: 'drop123abc', rel: 'a.png' })}`, { method: 'PUT', body: 'x' }))
        .status,
    ).toBe(401);
    // Windows separators count too: a file named "..\x" on Linux must not climb either.
    expect(
      (
        await fetch(
          `${host.origin}/upload?${q({ token: host.token, drop: 'drop123abc', rel: 'shoot/..\\..\\x.png' })}`,
          { method: 'PUT', body: 'x' },
        )
      ).status,
    ).toBe(400);

    const outside = join(mkdtempSync(join(tmpdir(), 'md-outside-')), 'secret.png');
    writeFileSync(outside, 'not really');
    const r = await fetch(`${host.origin}/media?${q({ token: host.token, path: outside })}`);
    expect(r.status).toBe(403);
    expect(((await r.json()) as { message: string }).message).toMatch(
      /is not a result MediaDesk recorded nor a file you gave it/,
    );
    expect((await fetch(`${host.origin}/media?${q({ token: host.token, path: '/etc/passwd' })}`)).status).toBe(403);
    expect(
      (await fetch(`${host.origin}/media?${q({ path: join(home, 'inbox', 'drop123abc', 'shoot', 'day1', 'a.png') })}`))
        .status,
    ).toBe(401);
  });

  it('judges a link by its target: a media-named link in the data folder to a file outside it is refused, one to a file inside is served', async () => {
    const secret = join(mkdtempSync(join(tmpdir(), 'md-outside-')), 'passwd');
    writeFileSync(secret, 'root:x:0:0:OUTSIDE-SECRET');
    // In the inbox: the data folder's only files /media serves that no job recorded.
    const dir = join(home, 'inbox', 'drop-links');
    mkdirSync(dir, { recursive: true });
    symlinkSync(secret, join(dir, 'leak.png'));
    symlinkSync('/etc/passwd', join(dir, 'passwd.png'));
    const real = join(dir, 'real.png');
    writeFileSync(
      real,
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123456' } })
        .png()
        .toBuffer(),
    );
    symlinkSync(real, join(dir, 'alias.png'));
    for (const name of ['leak.png', 'passwd.png']) {
      const r = await fetch(`${host.origin}/media?${q({ token: host.token, path: join(dir, name) })}`);
      const body = await r.text();
      expect([name, r.status]).toEqual([name, 403]);
      expect(body).toMatch(/is a link to a file outside the folders MediaDesk works with/);
      expect(body).not.toMatch(/OUTSIDE-SECRET|root:/);
    }
    const ok = await fetch(`${host.origin}/media?${q({ token: host.token, path: join(dir, 'alias.png') })}`);
    expect([ok.status, ok.headers.get('content-type')]).toEqual([200, 'image/png']);
  });
});

/** A socket of the host, authenticated as the page's is; `replies` collects every answer in order. */
async function openSocket() {
  const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`);
  const replies: { id: unknown; ok: boolean; error?: { code: string; message: string } }[] = [];
  ws.on('message', (m) => {
    const msg = JSON.parse(String(m));
    if (!('event' in msg)) replies.push(msg);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return { ws, replies };
}

describe('web host close', () => {
  it('closes with a download still being read, ending its connection instead of waiting for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-web-close-'));
    const closing = await startWebHost({ home: dir, env: {} });
    mkdirSync(join(dir, 'inbox', 'drop-big'), { recursive: true });
    const path = join(dir, 'inbox', 'drop-big', 'big.mp4');
    // Far more than the socket buffers hold, so the answer cannot end while the reader waits.
    writeFileSync(path, Buffer.alloc(32 * 1024 * 1024, 7));
    const agent = new Agent({ keepAlive: true });
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      request(`${closing.origin}/media?${q({ token: closing.token, path })}`, { agent }, resolve)
        .on('error', reject)
        .end(),
    );
    expect(res.statusCode).toBe(200);
    res.pause();
    // Before, close() waited on this connection until the reader let go (and after that for its keep-alive).
    await closing.close();
    expect(res.complete).toBe(false);
    res.destroy();
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('web host socket', () => {
  it('answers a message that is JSON but no request with why, and keeps serving (null once ended the host)', async () => {
    const { ws, replies } = await openSocket();
    for (const m of ['null', '5', '[1,2]', '"settings.get"', '{"id":1}', 'not json']) ws.send(m);
    ws.send(JSON.stringify({ id: 7, cmd: 'settings.get', payload: {} }));
    await expect.poll(() => replies.length).toBe(7);
    ws.close();
    expect(replies.slice(0, 6).map((r) => [r.id, r.ok, r.error?.code, r.error?.message])).toEqual([
      [null, false, 'invalid', 'message must be a JSON object {id, cmd, payload}'],
      [null, false, 'invalid', 'message must be a JSON object {id, cmd, payload}'],
      [null, false, 'invalid', 'message must be a JSON object {id, cmd, payload}'],
      [null, false, 'invalid', 'message must be a JSON object {id, cmd, payload}'],
      [null, false, 'invalid', 'message must name its command in "cmd" (a string)'],
      [null, false, 'invalid', 'message is not JSON'],
    ]);
    expect(replies[6]).toMatchObject({ id: 7, ok: true });
  });

  it('answers audit.event for a hostile event an older cache holds (a field 5,000 levels deep) with an error, and keeps serving', async () => {
    // Stored as a cache filled before import refused such events holds it: past every check.
    const row = { ...rowOf(makeEvent(900)), raw: deepEventLine(900) };
    host.core.audit.store.insertBatch([row], 'import');
    const { ws, replies } = await openSocket();
    ws.send(JSON.stringify({ id: 1, cmd: 'audit.event', payload: { eventId: 'evt_900' } }));
    ws.send(JSON.stringify({ id: 2, cmd: 'settings.get', payload: {} }));
    await expect.poll(() => replies.length).toBe(2);
    ws.close();
    expect(replies[0]).toMatchObject({
      id: 1,
      ok: false,
      error: {
        code: 'invalid',
        message: expect.stringMatching(/^event "evt_900" cannot be shown: the event is nested deeper than 32 levels/),
      },
    });
    expect(replies[1]).toMatchObject({ id: 2, ok: true });
    // The rest of the audit view still reads it as a row.
    const listed = await host.core.dispatch('audit.query', {
      filters: { eventTypes: [(makeEvent(900).action as { event_type: string }).event_type] },
    });
    expect(listed.ok && (listed.result as { rows: { eventId: string }[] }).rows.map((r) => r.eventId)).toContain(
      'evt_900',
    );
  });

  it('answers a result no socket can carry (too deep, circular) or a handler that throws anything with an error naming the command, and keeps serving', async () => {
    const handlers = host.core.handlers as Record<string, unknown>;
    const original = handlers['audit.event'];
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const detail = (event: Record<string, unknown>) => ({
      row: {
        eventId: 'e',
        date: '2026-03-01T00:00:00.000Z',
        eventType: 't',
        memberId: null,
        memberEmail: null,
        memberType: null,
        verb: null,
        status: null,
        category: null,
        groupId: null,
        folderRef: null,
        folderName: null,
        projectRef: null,
        requestId: null,
        correlationId: null,
        resourceId: null,
      },
      event,
      origin: 'import',
      sameRequest: [],
      sameRequestCount: 0,
      sameCorrelation: [],
      sameCorrelationCount: 0,
    });
    const results: (() => unknown)[] = [
      () => detail({ deep }),
      () => detail(circular),
      () => {
        // An error whose fields throw when read.
        throw Object.defineProperty({}, 'name', {
          get: () => {
            throw new Error('no name either');
          },
        });
      },
      () => Promise.reject(null),
    ];
    const { ws, replies } = await openSocket();
    try {
      for (const [i, r] of results.entries()) {
        handlers['audit.event'] = r;
        ws.send(JSON.stringify({ id: i, cmd: 'audit.event', payload: { eventId: 'e' } }));
        await expect.poll(() => replies.length).toBe(i + 1);
      }
    } finally {
      handlers['audit.event'] = original;
    }
    ws.send(JSON.stringify({ id: 'after', cmd: 'settings.get', payload: {} }));
    await expect.poll(() => replies.length).toBe(results.length + 1);
    ws.close();
    expect(replies.map((r) => [r.id, r.ok, r.error?.code, r.error?.message])).toEqual([
      [0, false, 'internal', 'the reply to "audit.event" could not be sent: it is nested deeper than 64 levels'],
      [1, false, 'internal', 'the reply to "audit.event" could not be sent: it is circular (a value holds itself)'],
      [2, false, 'internal', '"audit.event" failed'],
      [3, false, 'internal', 'null'],
      ['after', true, undefined, undefined],
    ]);
  });

  it('closes a socket that sends a message over the size limit with 1009, unread, and answers on a new socket', async () => {
    const { ws, replies } = await openSocket();
    const closed = new Promise<number | string>((resolve) => {
      ws.once('close', (code) => resolve(code)).once('message', () => resolve('answered'));
    });
    ws.on('error', () => {});
    const head = JSON.stringify({ id: 1, cmd: 'settings.get', payload: { pad: '' } });
    // One byte over: 16 MB frames were read whole (more than the largest command needs).
    const pad = 'x'.repeat(MAX_MESSAGE_BYTES + 1 - head.length);
    ws.send(JSON.stringify({ id: 1, cmd: 'settings.get', payload: { pad } }));
    // 1006 when the host ends the socket while this side is still writing the frame: closed unread all the same.
    expect([1009, 1006]).toContain(await closed);
    expect(replies).toEqual([]);
    const again = await openSocket();
    again.ws.send(JSON.stringify({ id: 'after', cmd: 'settings.get', payload: {} }));
    await expect.poll(() => again.replies.length).toBe(1);
    again.ws.close();
    expect(again.replies[0]).toMatchObject({ id: 'after', ok: true });
  });

  it('takes a presets file of the most characters presets.import takes, each 3 bytes as sent', async () => {
    const { ws, replies } = await openSocket();
    const file = (filler: string) =>
      JSON.stringify(
        {
          mediadeskPresets: 1,
          presets: [
            { name: 'Big file', tool: 'upscaler-precision', params: {} },
            { name: filler, tool: 'upscaler-precision', params: {} },
          ],
        },
        null,
        2,
      );
    const text = file('界'.repeat(PRESET_TEXT_MAX_CHARS - file('').length));
    expect(text.length).toBe(PRESET_TEXT_MAX_CHARS);
    const message = JSON.stringify({ id: 'big', cmd: 'presets.import', payload: { text, name: '界'.repeat(255) } });
    expect(Buffer.byteLength(message)).toBeGreaterThan(PRESET_TEXT_MAX_CHARS * 3);
    expect(overLimit(message)).toBeNull();
    ws.send(message);
    await expect.poll(() => replies.length, { timeout: 30_000 }).toBe(1);
    ws.close();
    const reply = replies[0] as unknown as { ok: boolean; result: { added: { name: string }[] } };
    expect([reply.ok, reply.result.added.map((p) => p.name)]).toEqual([true, ['Big file']]);
  });
});

describe('web host socket, nested frames', () => {
  it('refuses a frame of the largest size that nests deeply before parsing it (parsed, 20 of them kept 280 MB), and keeps serving', async () => {
    const { ws, replies } = await openSocket();
    const levels = Math.floor((MAX_MESSAGE_BYTES - 100) / 6);
    const frame = `{"id":1,"cmd":"settings.get","payload":${'{"a":'.repeat(levels)}0${'}'.repeat(levels)}}`;
    for (let i = 0; i < 3; i++) ws.send(frame);
    ws.send(JSON.stringify({ id: 'after', cmd: 'settings.get', payload: {}, note: '[[[{{{"]]]' }));
    await expect.poll(() => replies.length, { timeout: 30_000 }).toBe(4);
    ws.close();
    // Answered under the id it opens with, so the page's request does not wait forever.
    expect(replies.slice(0, 3).map((r) => [r.id, r.error?.message])).toEqual(
      Array(3).fill([1, 'message is nested deeper than 64 levels']),
    );
    expect(replies[3]).toMatchObject({ id: 'after' });
  });

  it("counts a message's bytes as the socket sends them, before the page sends one over the limit", () => {
    for (const text of ['a', 'é', '€', '😀', '\ud800x', '\udc00', 'a😀é€\ud83dz'])
      expect([text, overLimit(text, 0)]).toEqual([text, Buffer.byteLength(text)]);
    expect(overLimit('x'.repeat(MAX_MESSAGE_BYTES))).toBeNull();
    const over = Math.floor(MAX_MESSAGE_BYTES / 3) + 1;
    expect([overLimit('界'.repeat(over - 1)), overLimit('界'.repeat(over))]).toEqual([null, over * 3]);
  });

  it('counts nesting outside strings only', () => {
    expect(nestsDeeper(`{"a":"${'['.repeat(100)}"}`, 64)).toBe(false);
    expect(nestsDeeper(`{"a":"\\\\"}${'['.repeat(65)}`, 64)).toBe(true);
    expect(nestsDeeper(Buffer.from(`${'['.repeat(64)}${']'.repeat(64)}`), 64)).toBe(false);
  });
});

describe('opening files with the OS', () => {
  it('refuses a result type outside the folders the app works with, before any opener runs', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'md-elsewhere-'));
    const config = join(elsewhere, 'credentials.json');
    writeFileSync(config, '{"token": "not for the renderer"}');
    for (const cmd of ['shell.open', 'shell.reveal'] as const) {
      const r = await host.core.dispatch(cmd, { path: config });
      expect(r).toEqual({
        ok: false,
        error: {
          code: 'forbidden',
          message: `${config} is outside the folders MediaDesk works with (its data folder, the output folder, and the folders of your batches), so it is not opened`,
        },
      });
    }
  });

  it('accepts a result in the data folder, and still refuses types that could run a program there', () => {
    mkdirSync(join(home, 'inbox'), { recursive: true });
    const result = join(home, 'inbox', 'result.csv');
    writeFileSync(result, 'a,b\r\n');
    expect(host.core.openable(result)).toBe(result);
    const script = join(home, 'inbox', 'run.sh');
    writeFileSync(script, 'echo hi');
    expect(() => host.core.openable(script)).toThrow(/only result files can be opened/);
  });
});
