// Property-based: the web host's file routes (/media, /upload, and the renderer's files) under
// hostile paths: climbing, percent-encoded once or twice, NUL bytes, Windows separators, and links
// in the served folders that lead out of them. Nothing outside the allowed folders is ever served
// or written, and the host answers every request. FC_SEED=<n> replays a run; the seed is printed
// as the file starts.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join, sep } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { startWebHost } from '../../electron/host/web/server.ts';
import { fuzzRuns, hostileString } from './fuzz.ts';

fuzzRuns('test/fuzz/web-host-routes.test.ts', { numRuns: 200, timeMs: 25_000 });

const SECRET = 'OUTSIDE-SECRET-7f3a';
const home = mkdtempSync(join(tmpdir(), 'md-fuzz-routes-'));
const outside = mkdtempSync(join(tmpdir(), 'md-fuzz-outside-'));
const renderer = mkdtempSync(join(tmpdir(), 'md-fuzz-renderer-'));
/** The outside folder as it starts, and again after a run that wrote into it (so shrinking sees each case alone). */
function fillOutside(): void {
  for (const f of readdirSync(outside)) rmSync(join(outside, f), { recursive: true, force: true });
  writeFileSync(join(outside, 'secret.png'), `${SECRET} png`);
  writeFileSync(join(outside, 'secret.txt'), `${SECRET} txt`);
}
fillOutside();
mkdirSync(join(home, 'outputs'), { recursive: true });
mkdirSync(join(home, 'inbox', 'dropkept1'), { recursive: true });
/** The files the host may serve, by content. */
const INSIDE = new Set(['INSIDE ok.png', 'INSIDE kept.png', 'INSIDE notes.txt']);
writeFileSync(join(home, 'outputs', 'ok.png'), 'INSIDE ok.png');
writeFileSync(join(home, 'outputs', 'notes.txt'), 'INSIDE notes.txt');
writeFileSync(join(home, 'inbox', 'dropkept1', 'kept.png'), 'INSIDE kept.png');
// Links in the data folder that lead out of it: to a file, to a folder, and a drop folder that is one.
symlinkSync(join(outside, 'secret.png'), join(home, 'outputs', 'leak.png'));
symlinkSync(join(outside, 'secret.txt'), join(home, 'outputs', 'leak.txt'));
symlinkSync(outside, join(home, 'outputs', 'outdir'));
symlinkSync(outside, join(home, 'inbox', 'droplink1'));
writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>MediaDesk</title>');
mkdirSync(join(renderer, 'assets'));
writeFileSync(join(renderer, 'assets', 'app.js'), 'export {};');
symlinkSync(join(outside, 'secret.txt'), join(renderer, 'assets', 'leak.txt'));
symlinkSync(outside, join(renderer, 'assets', 'leakdir'));

// The person named it when starting the host (--folder): /media serves its files, a link judged by its target.
const host = await startWebHost({ home, env: {}, rendererDir: renderer, folders: [join(home, 'outputs')] });
const port = new URL(host.origin).port;
afterAll(async () => {
  await host.close();
  for (const d of [home, outside, renderer]) rmSync(d, { recursive: true, force: true });
});

/** Every file under `dir` with its content, links not followed: what must not change. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((f) => {
      const p = join(dir, f);
      const st = lstatSync(p);
      return st.isFile() ? `${f}=${readFileSync(p, 'utf8')}` : `${f}:${st.isSymbolicLink() ? 'link' : 'dir'}`;
    });
}
const outsideBefore = listing(outside);

/** One request as sent, the path exactly as given (no normalising); the body as text. */
function http(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent: false,
          headers: { host: `127.0.0.1:${port}`, connection: 'close' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
    } catch (err) {
      // Node itself refuses to send a path with a space or a control character: nothing reached the host.
      resolve({ status: -1, body: String(err) });
      return;
    }
    req.on('error', reject);
    req.end(body);
  });
}

/** A path's parts: climbing, encoded, Windows-style, the links above, and anything at all. */
const part = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '..',
      '.',
      '',
      'outputs',
      'outdir',
      'leak.png',
      'leak.txt',
      'ok.png',
      'notes.txt',
      'secret.png',
      'secret.txt',
      'inbox',
      'dropkept1',
      'droplink1',
      'kept.png',
      'assets',
      'leakdir',
      'app.js',
      'index.html',
    ),
    weight: 4,
  },
  fc.constantFrom(
    '%2e%2e',
    '%2E%2E',
    '%252e%252e',
    '..%2f..',
    '..%5c..',
    '..\\..',
    '%00',
    '\u0000',
    '.%2e',
    '%c0%ae%c0%ae',
    '\u2025',
    '..;',
    'a'.repeat(300),
  ),
  hostileString,
);
const root = fc.constantFrom(
  home,
  join(home, 'outputs'),
  join(home, 'outputs', 'outdir'),
  join(home, 'inbox', 'droplink1'),
  outside,
  '',
  '/',
  '//',
  '\\\\?\\C:',
  'C:',
);
/** The files and links themselves, reached straight or by a detour (`/./`, `//`, `/x/../`). */
const known = fc
  .tuple(
    fc.constantFrom(
      ['outputs', 'ok.png'],
      ['outputs', 'notes.txt'],
      ['inbox', 'dropkept1', 'kept.png'],
      ['outputs', 'leak.png'],
      ['outputs', 'leak.txt'],
      ['outputs', 'outdir', 'secret.png'],
      ['inbox', 'droplink1', 'secret.png'],
      ['..', basename(outside), 'secret.png'],
    ),
    fc.constantFrom('/', '/./', '//', '/inbox/../', '/outputs/outdir/../'),
  )
  .map(([parts, detour]) => `${home}${detour}${parts.join('/')}`);
const mediaPath = fc.oneof(
  known,
  fc
    .tuple(
      root,
      fc.array(part, { maxLength: 6 }),
      fc.constantFrom('/', '\\', '//'),
      fc.constantFrom('', '.png', '.txt', '.png%00.txt'),
    )
    .map(([r, parts, s, ext]) => `${r}${s}${parts.join(s)}${ext}`),
);
/** How the query carries a value: encoded as a browser does, raw, or encoded twice. */
const encoding = fc.constantFrom('component', 'raw', 'twice');
/** Percent-encoded UTF-8, as a browser encodes (a lone surrogate as U+FFFD, where encodeURIComponent throws). */
const pct = (v: string) =>
  [...Buffer.from(v, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
function encode(v: string, how: string): string {
  if (how === 'raw') return v.replace(/[&#]/g, pct);
  return how === 'twice' ? pct(pct(v)) : pct(v);
}

/** Nothing in the outside folder changed; when something did, it is put back first, and the run fails. */
function outsideUntouched(what: string): void {
  const now = listing(outside);
  if (now.join('\n') === outsideBefore.join('\n')) return;
  fillOutside();
  expect(now, `${what} wrote outside the inbox`).toEqual(outsideBefore);
}

function neverOutside(a: { status: number; body: string }, what: string): void {
  expect(a.body, what).not.toContain(SECRET);
  expect(a.status, `${what}: ${a.body.slice(0, 200)}`).toBeLessThan(500);
}

describe("the web host's file routes under hostile paths", () => {
  it('/media serves only the allowed files it is asked for, whatever the path', async () => {
    await fc.assert(
      fc.asyncProperty(mediaPath, encoding, async (path, how) => {
        const a = await http('GET', `/media?token=${host.token}&path=${encode(path, how)}`);
        neverOutside(a, path);
        if (a.status === 200) expect(INSIDE, path).toContain(a.body);
      }),
    );
    // Still serving, and still serving what it should.
    expect(
      (await http('GET', `/media?token=${host.token}&path=${encodeURIComponent(join(home, 'outputs', 'ok.png'))}`))
        .body,
    ).toBe('INSIDE ok.png');
  }, 50_000);

  it('/upload writes only inside its drop in the inbox, never through a link out of it', async () => {
    const drop = fc.oneof(
      { arbitrary: fc.constantFrom('dropfuzz1', 'dropkept1', 'droplink1'), weight: 3 },
      hostileString,
    );
    const rel = fc
      .tuple(fc.array(part, { minLength: 1, maxLength: 5 }), fc.constantFrom('/', '\\'))
      .map(([parts, s]) => parts.join(s));
    await fc.assert(
      fc.asyncProperty(drop, rel, encoding, async (d, r, how) => {
        const a = await http(
          'PUT',
          `/upload?token=${host.token}&drop=${encode(d, how)}&rel=${encode(r, how)}`,
          'FUZZ-BODY',
        );
        neverOutside(a, `${d} ${r}`);
        if (a.status === 200) {
          const { path, folder } = JSON.parse(a.body) as { path: string; folder: string };
          const inbox = realpathSync(join(home, 'inbox'));
          expect(path.startsWith(folder + sep) && folder.startsWith(join(home, 'inbox') + sep), path).toBe(true);
          expect(realpathSync(path).startsWith(inbox + sep), `${path} is really ${realpathSync(path)}`).toBe(true);
        }
        outsideUntouched(`${d} ${r}`);
      }),
    );
    // A drop folder that is a link out of the inbox is refused by name, its target left as it was.
    const linked = await http('PUT', `/upload?token=${host.token}&drop=droplink1&rel=a/b.png`, 'FUZZ-BODY');
    expect(linked).toEqual({
      status: 403,
      body: JSON.stringify({
        message: `${join(home, 'inbox', 'droplink1')} is a link, and a dropped file is written only inside its drop's own folders: not written`,
      }),
    });
    expect(listing(outside)).toEqual(outsideBefore);
  }, 50_000);

  it("the renderer's own files: no path, however written, reaches a file a link in its folder points to", async () => {
    const path = fc
      .tuple(fc.array(part, { maxLength: 5 }), fc.constantFrom('/', '\\', '//'))
      .map(([parts, s]) => `/${parts.map((p) => encode(p, 'raw')).join(s)}`);
    await fc.assert(
      fc.asyncProperty(path, async (p) => {
        neverOutside(await http('GET', p), p);
      }),
    );
    expect((await http('GET', '/assets/app.js')).status).toBe(200);
  }, 50_000);
});
