import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import WebSocket from 'ws';
import { startWebHost } from '../../electron/host/web/server.ts';
import { redactJsonText, redactSecrets } from '../../shared/redact.ts';
import { cliEnv, runCli } from '../cli.ts';
import { control } from './helpers.ts';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 200 });
});
afterAll(() => sb.close());

describe('a server that echoes the API key in an error', () => {
  it("never gets the key into the queue, the CLI's stderr or jobs list --json", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-redact-'));
    const shoot = join(dir, 'shoot');
    mkdirSync(shoot);
    writeFileSync(
      join(shoot, 'a.png'),
      await sharp({ create: { width: 32, height: 32, channels: 3, background: '#336699' } })
        .png()
        .toBuffer(),
    );
    await control(sb.url, 'faults', { echoKey: true });
    try {
      const env = cliEnv(join(dir, 'home'), sb.url, 'sandbox-owner');
      const run = await runCli(['run', 'upscaler-precision', shoot, '--out', join(dir, 'out')], { env });
      // The server's refusal is reported, its words kept, the key replaced.
      expect(run.err).toContain('[redacted key]');
      expect(run.err).not.toContain('sandbox-owner');
      const listed = await runCli(['jobs', 'list', '--all', '--json'], { env });
      expect(listed.code).toBe(0);
      expect(listed.out).toContain('[redacted key]');
      expect(listed.out).not.toContain('sandbox-owner');
    } finally {
      await control(sb.url, 'faults', { echoKey: false });
    }
  });
});

/** Every file below `dir` (databases with their journals, logs, reports, results' records) that holds `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => readFileSync(p).includes(needle));
}

async function image(path: string, background: string) {
  writeFileSync(
    path,
    await sharp({ create: { width: 32, height: 32, channels: 3, background } })
      .png()
      .toBuffer(),
  );
}

describe('a server that echoes the API key in every answer, failed and done (echoKeyInAnswers)', () => {
  it('keeps the key out of the database, the log, the CLI output, reports, audit and app runs and the web host replies', async () => {
    const key = 'sandbox-owner';
    const dir = mkdtempSync(join(tmpdir(), 'md-redact-2xx-'));
    const home = join(dir, 'home');
    for (const f of ['failing', 'working']) mkdirSync(join(dir, f));
    await image(join(dir, 'failing', 'a.png'), '#113355');
    await image(join(dir, 'working', 'b.png'), '#553311');
    const env = cliEnv(home, sb.url, key);
    const outputs: string[] = [];
    const cli = async (args: string[]) => {
      const r = await runCli(args, { env });
      outputs.push(`$ ${args.join(' ')}\n${r.out}\n${r.err}`);
      return r;
    };
    try {
      await control(sb.url, 'faults', { echoKeyInAnswers: true, failureRate: 1 });
      const failed = await cli([
        'run',
        'upscaler-precision',
        join(dir, 'failing'),
        '--out',
        join(dir, 'out'),
        '--json',
      ]);
      expect(failed.code).not.toBe(0);
      await control(sb.url, 'faults', { failureRate: 0 });
      const done = await cli(['run', 'upscaler-precision', join(dir, 'working'), '--out', join(dir, 'out'), '--json']);
      expect(done.code, done.err).toBe(0);
      // Every other family of answers: apps and their runs, usage, creations, the audit log, members, doctor.
      for (const args of [
        ['apps', 'list', '--json'],
        ['apps', 'show', 'jM4nX8sc', '--json'],
        ['apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=an echo', '--out', join(dir, 'apps')],
        ['apps', 'runs', '--json'],
        ['usage', '--granularity', 'day', '--json'],
        ['creations', '--json'],
        ['audit', 'sync'],
        ['doctor', '--json'],
      ]) {
        const r = await cli(args);
        expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
      }
      await control(sb.url, 'faults', { failureRate: 1 });
      const failedRun = await cli(['apps', 'run', 'jM4nX8sc', '--yes', '--new', '--input', 'brief=a failing echo']);
      expect(failedRun.code).not.toBe(0);
    } finally {
      await control(sb.url, 'faults', { echoKeyInAnswers: false, failureRate: 0 });
    }
    const listed = await cli(['jobs', 'list', '--all', '--json']);
    const { jobs } = JSON.parse(listed.out) as { jobs: { batchId: string; state: string; error: string | null }[] };
    expect(jobs.map((j) => j.state).sort()).toEqual(['done', 'failed']);
    // The server's words are kept, the key replaced.
    expect(jobs.find((j) => j.state === 'failed')!.error).toContain('[redacted key]');
    const audit = await cli(['audit', 'query', '--limit', '1000', '--json']);
    // The synced events keep the server's words, the key replaced.
    expect(audit.out, audit.err).toContain('[redacted key]');
    await cli(['audit', 'export', '--out', join(dir, 'audit.csv'), '--csv']);
    expect((await cli(['apps', 'runs', '--json'])).out).toContain('[redacted key]');
    for (const batch of new Set(jobs.map((j) => j.batchId))) {
      await cli(['report', batch, '--json']);
      await cli(['report', batch, '--csv', join(dir, `report-${batch}.csv`)]);
    }
    const host = await startWebHost({ home, env });
    try {
      const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`);
      const reply = await new Promise<string>((resolve, reject) => {
        ws.on('message', (m) => {
          if (!('event' in JSON.parse(String(m)))) resolve(String(m));
        });
        ws.once('open', () => ws.send(JSON.stringify({ id: 1, cmd: 'jobs.list', payload: { limit: 50, offset: 0 } })));
        ws.once('error', reject);
      });
      ws.close();
      expect(reply).toContain('[redacted key]');
      outputs.push(reply);
    } finally {
      await host.close();
    }
    expect(outputs.filter((o) => o.includes(key))).toEqual([]);
    expect(filesHolding(dir, key)).toEqual([]);
    expect(readdirSync(join(home, 'logs')).length).toBeGreaterThan(0);
  }, 120_000);

  it('redactJsonText replaces the key in every string and name of an answer, leaves signatures alone, at any depth', () => {
    const sig = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
    const answer = { data: { generated: [`https://x/r.png?sig=${sig}&k=KEY1`], error: 'bad KEY1', KEY1: 1, n: 3 } };
    // 5,000 levels: a walk over the parsed value would run out of stack here.
    const deep = `${'{"a":'.repeat(5000)}"KEY1"${'}'.repeat(5000)}`;
    expect(redactJsonText(deep, ['KEY1'])).toBe(deep.replace('KEY1', '[redacted key]'));
    expect(JSON.parse(redactJsonText(JSON.stringify(answer), ['KEY1']))).toEqual({
      data: {
        generated: [`https://x/r.png?sig=${sig}&k=[redacted key]`],
        error: 'bad [redacted key]',
        '[redacted key]': 1,
        n: 3,
      },
    });
  });
});

describe('redactSecrets', () => {
  it('replaces the given key and anything shaped like a key, and leaves ids, words and numbers alone', () => {
    const key = 'FPSXa1b2c3d4e5f6a7b8c9d0e1f2a3b4c5';
    expect(redactSecrets(`bad key ${key}.`, [key])).toBe('bad key [redacted key].');
    expect(redactSecrets('another secret sk9f8e7d6c5b4a39281706f5e4d3c2b1a0 here')).toBe(
      'another secret [redacted] here',
    );
    const plain =
      'task f7465686-2439-4e6c-bc38-6b34745d297a failed: prompt must be at most 2500 characters (found 12345678)';
    expect(redactSecrets(plain, [key])).toBe(plain);
  });
});
