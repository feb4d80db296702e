import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { redactSecrets } from '../../shared/redact.ts';
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
