import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { logsDir } from '../../electron/core/log/index.ts';
import { crashesDir } from '../../electron/core/problem-report.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { runCli } from '../../electron/host/cli/main.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';

// Not key-shaped (dashes cut it into short runs): only the stored key itself can find it.
const KEY = 'md-live_7f3a-Q9zk-2b81-secret';
// Key-shaped: a key the log met before it knew it (another process, an older version).
const KEY_SHAPED = 'FPSX4b9d7e1c2a3f4e5d6c7b8a9f0e1d2c3';
const MARKER = 'CONTENT-MARKER-7d1e: the inside of a photo the person dropped. '.repeat(4);

const write = (path: string, data: string | Buffer) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
};

/** A data folder whose logs, settings and crash dumps hold the key, and whose logs name an input file. */
function seededHome() {
  const root = mkdtempSync(join(tmpdir(), 'md-problem-'));
  const home = join(root, 'data');
  const out = join(root, 'out');
  const input = join(root, 'photos', 'shoot.txt');
  write(input, MARKER);
  write(
    join(home, 'settings.json'),
    JSON.stringify({ outputDir: out, baseUrl: `https://api.example.com/?k=${KEY}`, apiKey: KEY }),
  );
  const echoedBody = Buffer.from(MARKER).toString('base64');
  write(
    join(logsDir(home), 'main.log'),
    [
      `[2026-12-05 10:00:00.000] [info]  queued ${input}`,
      `[2026-12-05 10:00:01.000] [warn]  the service answered 400: invalid key ${KEY}`,
      `[2026-12-05 10:00:02.000] [warn]  x-magnific-api-key: ${KEY_SHAPED}`,
      `[2026-12-05 10:00:03.000] [error] create failed, body {"image":"${echoedBody}"}`,
      `[2026-12-05 10:00:04.000] [error] echoed ${'word '.repeat(1000)}`,
    ].join('\n'),
  );
  write(join(logsDir(home), 'cli.1.log'), `[2026-12-04 09:00:00.000] [info]  key ${KEY} set\n`);
  const dump = (tag: string) =>
    Buffer.concat([
      Buffer.from(`MDMP${tag}`),
      Buffer.from(KEY, 'latin1'),
      Buffer.from(KEY, 'utf16le'),
      Buffer.alloc(64),
    ]);
  const old = join(crashesDir(home), 'completed', 'old.dmp');
  write(old, dump('old'));
  utimesSync(old, new Date('2026-01-01'), new Date('2026-01-01'));
  write(join(crashesDir(home), 'completed', 'newest.dmp'), dump('new'));
  return { home, out, input, echoedBody };
}

function scan(zipPath: string, forbidden: string[]) {
  const entries = unzipSync(readFileSync(zipPath));
  const found: string[] = [];
  for (const [name, bytes] of Object.entries(entries))
    for (const f of forbidden)
      for (const enc of ['latin1', 'utf16le'] as const)
        if (Buffer.from(bytes).includes(Buffer.from(f, enc))) found.push(`${name}: ${f.slice(0, 20)} (${enc})`);
  return { entries, found };
}

describe('Report a problem', () => {
  it('builds a zip under the output folder with logs, versions, settings and the last crash: no key, no file content', async () => {
    const { home, out, input, echoedBody } = seededHome();
    const secrets = new MemorySecretStore();
    await secrets.set(KEY);
    const core = await createCore({
      home,
      host: 'electron',
      secrets,
      runQueue: false,
      env: {},
      startSandbox: () => startSandbox({ port: 0 }),
    });
    let reply;
    try {
      reply = await core.dispatch('support.report', {});
    } finally {
      await core.close();
    }
    if (!reply.ok) throw new Error(reply.error.message);
    const r = reply.result as { path: string; entries: string[]; crashDump: boolean };
    expect(dirname(r.path)).toBe(join(out, 'Exports'));
    expect(r.crashDump).toBe(true);

    const { entries, found } = scan(r.path, [
      KEY,
      KEY_SHAPED,
      MARKER.slice(0, 40),
      ...(echoedBody.match(/.{12}/g) ?? []),
    ]);
    expect(found).toEqual([]);
    expect(Object.keys(entries).sort()).toEqual(
      [
        'README.txt',
        'versions.json',
        'settings.json',
        'logs/cli.1.log',
        'logs/electron.log',
        'logs/main.log',
        'crash/newest.dmp',
      ].sort(),
    );
    expect(r.entries.sort()).toEqual(Object.keys(entries).sort());
    const text = (name: string) => new TextDecoder().decode(entries[name]);
    // The log stays useful: the file's path is there, and what was redacted says so.
    expect(text('logs/main.log')).toContain(input);
    expect(text('logs/main.log')).toContain('[redacted key]');
    expect(text('logs/main.log')).toContain('[data removed]');
    expect(text('logs/main.log')).toMatch(/\[cut: \d+ characters\]/);
    const versions = JSON.parse(text('versions.json'));
    expect(versions).toMatchObject({
      host: 'electron',
      node: process.versions.node,
      os: { platform: process.platform },
    });
    const settings = JSON.parse(text('settings.json'));
    expect(settings.outputDir).toBe(out);
    expect(Object.keys(settings).filter((k) => /key/i.test(k))).toEqual([]);
    expect(text('README.txt')).toContain('Nothing was sent');
    // The dump keeps its layout for a debugger: same size, only the key overwritten.
    expect(entries['crash/newest.dmp'].length).toBe(
      readFileSync(join(crashesDir(home), 'completed', 'newest.dmp')).length,
    );
    // The web host may send it as a download: it is a file saved at the person's request.
    expect(() => core.savedFiles.check(r.path)).not.toThrow();
  });

  it('says when there is no crash dump, and `mediadesk report-problem --out DIR` moves the zip there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'md-problem-cli-'));
    const home = join(root, 'data');
    const dest = join(root, 'attach');
    write(join(home, 'settings.json'), JSON.stringify({ outputDir: join(root, 'out') }));
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let said = '';
    stdout.on('data', (d) => (said += String(d)));
    const code = await runCli(['report-problem', '--out', dest], {
      stdout,
      stderr,
      env: { MEDIADESK_HOME: home, MEDIADESK_KEYCHAIN_SERVICE: 'mediadesk-test-absent' },
    });
    expect(code).toBe(0);
    const path = /wrote (.+\.zip)/.exec(said)?.[1] ?? '';
    expect(dirname(path)).toBe(dest);
    const entries = unzipSync(readFileSync(path));
    expect(Object.keys(entries).some((n) => n.startsWith('crash/'))).toBe(false);
    expect(new TextDecoder().decode(entries['README.txt'])).toContain('no crash dump');
    expect(said).toContain('Nothing was sent');
  });
});
