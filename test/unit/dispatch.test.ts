import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { DeskError } from '../../shared/contract/define.ts';
import { MAX_REPLY_BYTES, MAX_REPLY_DEPTH, replyProblem } from '../../electron/core/dispatch.ts';
import { eventText, replyText } from '../../electron/host/web/message.ts';
import { HOST_ONLY_COMMANDS } from '../../electron/core/merge-handlers.ts';
import { COMMAND_NAMES } from '../../shared/contract/index.ts';

const core = await createCore({
  home: mkdtempSync(join(tmpdir(), 'md-core-')),
  host: 'web',
  secrets: new MemorySecretStore(),
  startSandbox: () => startSandbox({ port: 0 }),
  env: {},
});
afterAll(() => core.close());

describe('the dispatcher every transport calls', () => {
  it('serves every command of the contract, each from one area, but those only a host serves', () => {
    const served = Object.keys(core.handlers).sort();
    expect(served).toEqual(COMMAND_NAMES.filter((c) => !HOST_ONLY_COMMANDS.includes(c)).sort());
    // The host-only ones are real commands (a renamed one would leave a stale name here).
    for (const c of HOST_ONLY_COMMANDS) expect(COMMAND_NAMES).toContain(c);
  });

  it('refuses an unknown command', async () => {
    expect(await core.dispatch('settings.drop', {})).toEqual({
      ok: false,
      error: { code: 'not_found', message: 'unknown command "settings.drop"' },
    });
  });

  it('refuses a payload that breaks the contract, naming the field, before any handler runs', async () => {
    const r = await core.dispatch('settings.set', { concurrency: 'many', apiKey: 'sk-x' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid');
      expect(r.error.invalid?.map((p) => p.field)).toEqual(expect.arrayContaining(['concurrency']));
    }
    expect(core.settings.get().concurrency).toBe(4);
  });

  it('a refusal says each problem once, in words a user can act on', async () => {
    const r = await core.dispatch('settings.set', { theme: 'purple', concurrency: 'many' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // Not the command's internal name, nor zod's code-quoted values.
    expect(r.error.message).toBe('concurrency must be a number; theme must be one of system, light, dark');
    expect(DeskError.from(r.error).describe()).toBe(r.error.message);
    const usage = await core.dispatch('usage.query', { granularity: 'day', from: '' });
    expect(!usage.ok && DeskError.from(usage.error).describe()).toBe('from must be a real date YYYY-MM-DD');
    // A message that quotes a field's reason, or names the field with its own, is not followed by it again.
    expect(
      new DeskError('invalid', 'the range cannot exceed 365 days', [
        { field: 'from', reason: 'the range cannot exceed 365 days' },
      ]).describe(),
    ).toBe('the range cannot exceed 365 days');
    expect(
      new DeskError('invalid', 'from: 2025-13-45 is not a date', [
        { field: 'from', reason: 'must be a date YYYY-MM-DD' },
      ]).describe(),
    ).toBe('from: 2025-13-45 is not a date');
    expect(
      new DeskError('invalid', 'settings not saved', [
        { field: 'outputDir', reason: 'must be a full path' },
      ]).describe(),
    ).toBe('settings not saved: outputDir must be a full path');
  });

  it('dates are real calendar days, and a range the wrong way round is refused, for every command that takes one', async () => {
    const usage = await core.dispatch('usage.query', { granularity: 'day', from: '2026-02-30', to: '2026-03-05' });
    expect(!usage.ok && DeskError.from(usage.error).describe()).toBe('from must be a real date YYYY-MM-DD');
    const reversed = await core.dispatch('audit.query', { filters: { from: '2026-03-10', to: '2026-03-02' } });
    expect(!reversed.ok && DeskError.from(reversed.error).describe()).toBe(
      'filters.from is after to: no event can fall between them',
    );
    for (const cmd of ['audit.facets', 'audit.timeline'] as const) {
      const r = await core.dispatch(cmd, {
        filters: { from: '2026-03-02T12:00:00Z', to: '2026-03-02T11:00:00Z' },
        bucket: 'day',
      });
      expect(r.ok).toBe(false);
    }
    const exp = await core.dispatch('audit.export', {
      format: 'csv',
      path: join(tmpdir(), 'never.csv'),
      filters: { from: '2026-03-10', to: '2026-03-02' },
    });
    expect(!exp.ok && exp.error.code).toBe('invalid');
    // One day as both bounds is the whole day, and an instant inside it is within the range.
    for (const filters of [
      { from: '2026-03-02', to: '2026-03-02' },
      { from: '2026-03-02T23:00:00Z', to: '2026-03-02' },
    ]) {
      expect((await core.dispatch('audit.query', { filters })).ok).toBe(true);
    }
  });

  it("a time without a zone is UTC in the range check too, as in the query, whatever the machine's zone", async () => {
    const tz = process.env.TZ;
    // Node reads TZ again when it is set: this process now runs as a machine in New York would.
    process.env.TZ = 'America/New_York';
    try {
      expect(new Date(Date.UTC(2026, 2, 2, 12)).getHours()).toBe(7);
      // 22:00 UTC on March 2 is within March 2 (a local reading, 03:00Z on March 3, was refused as after it).
      expect((await core.dispatch('audit.query', { filters: { from: '2026-03-02T22:00', to: '2026-03-02' } })).ok).toBe(
        true,
      );
      // And 23:30 UTC is after 23:00 UTC (a local reading would not see it).
      const reversed = await core.dispatch('audit.query', {
        filters: { from: '2026-03-02T23:30', to: '2026-03-02T23:00' },
      });
      expect(reversed.ok).toBe(false);
      expect(
        (await core.dispatch('audit.query', { filters: { from: '2026-03-02T23:30', to: '2026-03-02T18:00-05:00' } }))
          .ok,
      ).toBe(false);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('a partial settings change through the contract keeps the other settings', async () => {
    await core.dispatch('settings.set', { concurrency: 9 });
    await core.dispatch('settings.set', { theme: 'light' });
    expect(core.settings.get()).toMatchObject({ concurrency: 9, theme: 'light' });
  });

  it("reports where results go: Settings' output folder, else a MediaDesk folder in the user's home", async () => {
    const info = async () =>
      ((await core.dispatch('app.info', {})) as { result: { outputDir: string } }).result.outputDir;
    expect(await info()).toBe(join(homedir(), 'MediaDesk'));
    await core.dispatch('settings.set', { outputDir: '/tmp/md-out' });
    expect(await info()).toBe('/tmp/md-out');
    await core.dispatch('settings.set', { outputDir: '' });
  });

  it('tells only whether a key is set, never the key; the Sandbox answers while none is', async () => {
    const before = await core.dispatch('app.info', {});
    expect(before.ok && (before.result as { backend: { effective: string } }).backend.effective).toBe('sandbox');
    await core.dispatch('key.set', { key: 'sk-secret-value-1' });
    await core.dispatch('settings.set', { backend: 'live', baseUrl: 'https://api.example.com' });
    const status = await core.dispatch('key.status', {});
    // Its fingerprint (8 hex digits of its SHA-256) tells it from another key; none of the key is shown.
    expect(status).toEqual({
      ok: true,
      result: {
        set: true,
        keychain: 'memory',
        fingerprint: createHash('sha256').update('sk-secret-value-1').digest('hex').slice(0, 8),
        keychainProblem: 'no OS keychain is available',
      },
    });
    const info = await core.dispatch('app.info', {});
    expect(JSON.stringify(info)).not.toContain('sk-secret-value-1');
    expect(info.ok && (info.result as { backend: { effective: string } }).backend.effective).toBe('live');
    await core.dispatch('key.clear', {});
    const after = await core.dispatch('app.info', {});
    expect(after.ok && (after.result as { backend: { effective: string; reason: string } }).backend.reason).toMatch(
      /no API key is set/,
    );
  });

  it('the Sandbox backend starts in-process and answers over real HTTP with the chosen demo identity', async () => {
    await core.dispatch('settings.set', { backend: 'sandbox', sandboxKey: 'sandbox-member' });
    const t = await core.backend.target();
    expect(t.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.apiKey).toBe('sandbox-member');
    const res = await fetch(`${t.baseUrl}/v1/analytics/audit-logs/events`, {
      headers: { 'x-magnific-api-key': t.apiKey },
    });
    expect(res.status).toBe(403);
  });

  it('a built-in Sandbox that could not start is started again on the next request, once its port is free', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    const other = await createCore({
      home: mkdtempSync(join(tmpdir(), 'md-core-restart-')),
      host: 'web',
      secrets: new MemorySecretStore(),
      startSandbox: () => startSandbox({ port }),
      env: {},
      runQueue: false,
    });
    try {
      await expect(other.backend.target()).rejects.toThrow(/EADDRINUSE/);
      // Said where the backend is shown, not a status that cannot be read.
      const info = await other.dispatch('app.info', {});
      expect(info.ok && (info.result as { backend: { reason: string } }).backend.reason).toMatch(
        /could not start \(.*EADDRINUSE.*\) and is tried again on the next request/,
      );
      await new Promise<void>((r) => taken.close(() => r()));
      const t = await other.backend.target();
      expect(t.baseUrl).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`${t.baseUrl}/v1/ai/loras`, { headers: { 'x-magnific-api-key': t.apiKey } })).status).toBe(
        200,
      );
      const later = await other.dispatch('app.info', {});
      expect(later).toMatchObject({ ok: true, result: { backend: { effective: 'sandbox', baseUrl: t.baseUrl } } });
      expect(later.ok && (later.result as { backend: { reason: string } }).backend.reason).not.toMatch(
        /could not start/,
      );
    } finally {
      taken.close();
      await other.close();
    }
  });
});

describe('replies every host can send', () => {
  it('replyProblem names what neither JSON nor a structured clone carries, with a bounded stack', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const circular: unknown[] = [];
    circular.push([circular]);
    const mb = 'x'.repeat(1024 * 1024);
    expect(replyProblem(deep)).toBe(`is nested deeper than ${MAX_REPLY_DEPTH} levels`);
    expect(replyProblem(circular)).toBe('is circular (a value holds itself)');
    expect(replyProblem({ n: 1n })).toBe('holds a BigInt, which JSON cannot carry');
    expect(replyProblem({ f: () => 1 })).toBe('holds a function, which a reply cannot carry');
    expect(replyProblem(Array.from({ length: MAX_REPLY_BYTES / mb.length + 1 }, () => mb))).toBe(
      `is larger than ${MAX_REPLY_BYTES / 1024 / 1024} MB`,
    );
    // Shared (not circular) values and plain replies are fine.
    const shared = { a: 1 };
    expect(replyProblem({ x: shared, y: [shared, shared], s: 'text', n: null, u: undefined, b: true })).toBeNull();
  });

  it('the web host writes any reply as text, an unwritable one as an error naming the command', () => {
    expect(JSON.parse(replyText(3, 'settings.get', { ok: true, result: { a: 1 } }))).toEqual({
      id: 3,
      ok: true,
      result: { a: 1 },
    });
    const circular: Record<string, unknown> = {};
    circular.me = circular;
    expect(JSON.parse(replyText('x', 'audit.event', { ok: true, result: circular }))).toEqual({
      id: 'x',
      ok: false,
      error: {
        code: 'internal',
        message: 'the reply to "audit.event" could not be sent: it is circular (a value holds itself)',
      },
    });
    expect(JSON.parse(replyText(null, 'c'.repeat(500), { ok: true, result: { big: 2n } })).error.message).toBe(
      `the reply to "${'c'.repeat(80)}…" could not be sent: it holds a BigInt, which JSON cannot carry`,
    );
    expect(eventText('jobs.changed', { n: 1n })).toBeNull();
    expect(eventText('jobs.changed', { n: 1 })).toBe('{"event":"jobs.changed","payload":{"n":1}}');
  });
});
