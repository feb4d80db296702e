import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { logsDir, openLog } from '../../electron/core/log/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DEFAULT_KEY_HEADER } from '../../shared/service-profile.ts';
import { control } from '../engine/helpers.ts';

const KEY = 'sandbox-owner';
let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
});
afterAll(() => sb.close());

const newHome = () => mkdtempSync(join(tmpdir(), 'md-log-'));

describe('the log a user can send', () => {
  it('is written in the data folder by a run of the core, and a key the server echoes in an error is not in it', async () => {
    const home = newHome();
    const core = await createCore({
      home,
      host: 'web',
      secrets: new MemorySecretStore(),
      startSandbox: () => startSandbox({ port: 0 }),
      env: { MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: KEY },
    });
    await control(sb.url, 'faults', { echoKey: true });
    try {
      // A POST the core sends at once: the Sandbox answers 400 quoting the key in its message and a field's reason.
      const usage = await core.dispatch('usage.query', {
        granularity: 'day',
        from: '2026-03-01',
        to: '2026-03-05',
        refresh: true,
      });
      expect(usage.ok).toBe(false);
      // The server's answer as it came, before any client redaction, handed to the log as it is.
      const raw = await fetch(`${sb.url}/v1/analytics/team-credit-usage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [DEFAULT_KEY_HEADER]: KEY },
        body: '{}',
      });
      const body = await raw.text();
      expect(body).toContain(KEY);
      core.log.warn('the server answered', raw.status, body);
      core.log.error(new Error(`echoed: ${body}`));
    } finally {
      await control(sb.url, 'faults', { echoKey: false });
      await core.close();
    }
    const file = join(logsDir(home), 'web.log');
    expect(core.log.file).toBe(file);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/MediaDesk \S+ \(web\) on /);
    expect(text).toContain('"usage.query" failed:');
    expect(text).toContain('the server answered 400');
    expect(text).toContain('[redacted key]');
    expect(text).not.toContain(KEY);
  });

  it('redacts anything shaped like a key, and a secret added later, from the next line on', () => {
    const home = newHome();
    const log = openLog({ home, name: 'cli' });
    const token = 'tok_' + 'Zx9'.repeat(4);
    log.info('a key-shaped run sk9f8e7d6c5b4a39281706f5e4d3c2b1a0 in a message');
    log.addSecret(token);
    log.info({ error: { message: `bad token ${token}` } });
    const text = readFileSync(log.file, 'utf8');
    expect(text).toContain('a key-shaped run [redacted] in a message');
    expect(text).toContain('bad token [redacted key]');
    expect(text).not.toContain(token);
  });

  it('rotates past its size limit, keeping the newest files', () => {
    const home = newHome();
    const maxBytes = 4096;
    const log = openLog({ home, name: 'main', maxBytes, keep: 2 });
    const line = 'x'.repeat(200);
    for (let i = 0; i < 120; i++) log.info(`line ${i}`, line);
    const files = readdirSync(logsDir(home)).sort();
    expect(files).toEqual(['main.1.log', 'main.2.log', 'main.log']);
    // Rotation happens before a write that finds the file past the limit: at most one line over it.
    for (const f of files) expect(statSync(join(logsDir(home), f)).size).toBeLessThan(maxBytes + 400);
    expect(readFileSync(join(logsDir(home), 'main.log'), 'utf8')).toContain('line 119 ');
    const older = readFileSync(join(logsDir(home), 'main.1.log'), 'utf8');
    expect(older).not.toContain('line 119 ');
    expect(older).toMatch(/line \d+ /);
    expect(existsSync(join(logsDir(home), 'main.3.log'))).toBe(false);
  });
});
