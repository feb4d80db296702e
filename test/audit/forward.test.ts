import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardHandlers } from '../../electron/core/audit/forward/handlers.ts';
import { AuditForwarder, type SinkSecretStore } from '../../electron/core/audit/forward/service.ts';
import { exportEvents } from '../../electron/core/audit/export.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { SANDBOX_HEC_TOKEN } from '../../electron/sandbox/siem.ts';
import { sinkSchema, type SinkConfig } from '../../shared/audit-sinks.ts';
import { TestClock } from '../clock.ts';
import { fillArchive, json } from './forward-helpers.ts';
import { makeEvent, rowOf, tempDir } from './helpers.ts';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

const memorySecrets = (values: Record<string, string>): SinkSecretStore => ({
  get: async (id) => values[id] ?? null,
  set: async (id, v) => void (values[id] = v),
  clear: async (id) => void delete values[id],
});

function forwarderOver(
  db: ConstructorParameters<typeof AuditForwarder>[0]['db'],
  sinks: unknown[],
  clock?: TestClock,
  maxBatchEvents?: number,
) {
  let list = sinks.map((s) => sinkSchema.parse(s));
  return new AuditForwarder({
    db,
    settings: () => ({ auditSinks: list, forwardAfterAuditSync: false }),
    saveSinks: (s: SinkConfig[]) => void (list = s),
    secrets: memorySecrets({ hec: SANDBOX_HEC_TOKEN }),
    clock,
    maxBatchEvents,
  });
}

const reset = () =>
  Promise.all([json(`${sandbox.url}/__sandbox/siem/reset`, {}), json(`${sandbox.url}/__sandbox/reset`, {})]);

describe('audit forwarding', () => {
  it('delivers every event to HEC with acks, refuses one with its reason, and the others go on', async () => {
    await reset();
    const t = tempDir();
    const service = fillArchive(join(t.dir, 'audit.db'), 2500);
    const ids = (service.store.db.prepare('SELECT event_id FROM events').pluck().all() as string[]).sort();
    const refused = ids[1234];
    await json(`${sandbox.url}/__sandbox/faults`, { siemRefuse: [refused], hecAck: true });
    const f = forwarderOver(service.store.db, [{ kind: 'splunk-hec', id: 'hec', url: sandbox.url }]);
    const [r] = await f.forward();
    expect(r).toMatchObject({ outcome: 'complete', delivered: 2499, refused: 1 });
    const got = await json<{ ids: string[] }>(`${sandbox.url}/__sandbox/siem/hec/ids`);
    expect(got.ids.sort()).toEqual(ids.filter((id) => id !== refused));
    const summary = await json<{ hec: { maxBatch: number; acks: { confirmed: number } } }>(
      `${sandbox.url}/__sandbox/siem`,
    );
    expect(summary.hec.maxBatch).toBeLessThanOrEqual(1000);
    expect(summary.hec.acks.confirmed).toBeGreaterThanOrEqual(3);
    const [env] = (await json<{ envelopes: Record<string, unknown>[] }>(`${sandbox.url}/__sandbox/siem/hec/envelopes`))
      .envelopes;
    expect(Object.keys(env).sort()).toEqual(['event', 'host', 'source', 'sourcetype', 'time']);
    const dead = forwardHandlers(f)['audit.sinkRefused']({ id: 'hec', limit: 10 }) as {
      events: { eventId: string; reason: string }[];
    };
    expect(dead.events).toEqual([
      expect.objectContaining({ eventId: refused, reason: expect.stringContaining('HEC 400') }),
    ]);
    const status = await f.status();
    expect(status.sinks[0]).toMatchObject({ state: 'up-to-date', behind: 0, delivered: 2499, refused: 1 });
    service.store.close();
    t.cleanup();
  });

  it('delivers events cached later behind the watermark (an import of older events)', async () => {
    await reset();
    const t = tempDir();
    const service = fillArchive(join(t.dir, 'audit.db'), 300, 1000);
    const f = forwarderOver(service.store.db, [{ kind: 'opensearch', id: 'os', url: sandbox.url, index: 'audit' }]);
    expect((await f.forward())[0]).toMatchObject({ error: null, outcome: 'complete', delivered: 300 });
    // Older events than every one delivered: without the trigger's list they would never leave.
    service.store.insertBatch(
      [0, 1, 2].map((i) => rowOf(makeEvent(i, { event_id: `old_${i}`, date: '2025-06-01T00:00:00Z' }))),
      'import',
    );
    expect((await f.status()).sinks[0]).toMatchObject({ state: 'behind', behind: 3 });
    expect((await f.forward())[0]).toMatchObject({ outcome: 'complete', delivered: 3 });
    const got = await json<{ ids: string[] }>(`${sandbox.url}/__sandbox/siem/bulk/audit/ids`);
    expect(got.ids).toHaveLength(303);
    expect(got.ids).toEqual(expect.arrayContaining(['old_0', 'old_1', 'old_2']));
    expect((await f.status()).sinks[0]).toMatchObject({ state: 'up-to-date', behind: 0 });
    service.store.close();
    t.cleanup();
  });

  it('counts a 409 (already indexed) as delivered through the Elasticsearch client', async () => {
    await reset();
    const t = tempDir();
    const service = fillArchive(join(t.dir, 'audit.db'), 1500);
    const f1 = forwarderOver(service.store.db, [{ kind: 'elasticsearch', id: 'es', url: sandbox.url, index: 'audit' }]);
    await f1.forward();
    // The watermark lost (a crash before it was stored): everything goes again, and 409 is fine.
    service.store.db.exec('DELETE FROM forward_sinks');
    const [r] = await f1.forward();
    expect(r).toMatchObject({ outcome: 'complete', delivered: 1500, refused: 0 });
    const s = await json<{ bulk: { duplicates: number; indices: Record<string, number> } }>(
      `${sandbox.url}/__sandbox/siem`,
    );
    expect(s.bulk).toMatchObject({ duplicates: 1500, indices: { audit: 1500 } });
    service.store.close();
    t.cleanup();
  });

  it('waits the Retry-After of a 429 on the clock before sending again', async () => {
    await reset();
    await json(`${sandbox.url}/__sandbox/faults`, { siemRate429: 1, retryAfterSec: 30 });
    const t = tempDir();
    const service = fillArchive(join(t.dir, 'audit.db'), 10);
    const clock = new TestClock(Date.UTC(2026, 5, 1));
    const f = forwarderOver(service.store.db, [{ kind: 'splunk-hec', id: 'hec', url: sandbox.url }], clock);
    const run = f.forward();
    const start = clock.now();
    await expect.poll(() => clock.nextAt).not.toBeNull();
    // One request refused; the wait is the server's 30 s (and up to a second of jitter).
    expect(clock.nextAt! - start).toBeGreaterThanOrEqual(30_000);
    expect(clock.nextAt! - start).toBeLessThanOrEqual(31_000);
    const failing = (await f.status()).sinks[0];
    expect(failing).toMatchObject({ state: 'failing', behind: 10, lastError: expect.stringContaining('429') });
    await json(`${sandbox.url}/__sandbox/faults`, { siemRate429: 0 });
    // From here time runs by itself (the ack polls wait on the clock too).
    const stop = clock.autoAdvance(() => true);
    expect((await run)[0]).toMatchObject({ outcome: 'complete', delivered: 10, retries: 1 });
    stop();
    expect((await f.status()).sinks[0]).toMatchObject({ state: 'up-to-date', failingSince: null });
    service.store.close();
    t.cleanup();
  });

  it('sends again the batches whose HEC ack never comes, while others are in flight', async () => {
    await reset();
    await json(`${sandbox.url}/__sandbox/faults`, { hecAckLoss: 0.3 });
    const t = tempDir();
    // 20 requests of 100 events, as 20,000 events make at 1,000 a request: as many acks to lose.
    const service = fillArchive(join(t.dir, 'audit.db'), 2000);
    const clock = new TestClock();
    const stop = clock.autoAdvance(() => true);
    const f = forwarderOver(service.store.db, [{ kind: 'splunk-hec', id: 'hec', url: sandbox.url }], clock, 100);
    const [r] = await f.forward();
    stop();
    expect(r).toMatchObject({ outcome: 'complete', delivered: 2000, refused: 0 });
    expect(r.retries).toBeGreaterThan(0);
    const got = await json<{ ids: string[] }>(`${sandbox.url}/__sandbox/siem/hec/ids`);
    expect(got.ids.length).toBe(2000);
    expect((await json<{ hec: { maxBatch: number } }>(`${sandbox.url}/__sandbox/siem`)).hec.maxBatch).toBe(100);
    service.store.close();
    t.cleanup();
  });

  it('writes gzipped NDJSON files by hour that read back as the archive export', async () => {
    const t = tempDir();
    const service = fillArchive(join(t.dir, 'audit.db'), 12_000);
    const folder = join(t.dir, 'out');
    const f = forwarderOver(service.store.db, [{ kind: 'file', id: 'files', folder }]);
    expect((await f.forward())[0]).toMatchObject({ outcome: 'complete', delivered: 12_000 });
    const files: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(folder);
    for (const p of files)
      expect(p.slice(folder.length)).toMatch(/^\/\d{4}\/\d{2}\/\d{2}\/\d{2}\/\d{8}T\d{9}Z-[0-9a-f-]{36}\.json\.gz$/);
    const lines = files.flatMap((p) => gunzipSync(readFileSync(p)).toString('utf8').split('\n').filter(Boolean));
    const out = join(t.dir, 'export.ndjson');
    await exportEvents(join(t.dir, 'audit.db'), {
      format: 'ndjson',
      path: out,
      filters: {},
      sort: { field: 'date', dir: 'asc' },
    });
    const exported = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBe(12_000);
    expect([...lines].sort()).toEqual([...exported].sort());
    service.store.close();
    t.cleanup();
  });
});
