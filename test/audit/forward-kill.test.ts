import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { comparePlaces } from '../../electron/core/audit/forward/read.ts';
import { openSettingsFile, SettingsService } from '../../electron/core/settings.ts';
import { sinkSecretEnv } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { SANDBOX_HEC_TOKEN } from '../../electron/sandbox/siem.ts';
import { BIN } from '../cli.ts';
import { fillArchive, json } from './forward-helpers.ts';
import { tempDir } from './helpers.ts';

/**
 * The 200 requests of a sink (200,000 events at 1,000 a request), made of 100-event requests:
 * the same failures, kills and watermarks over a tenth of the events (the bench forwards 1,000,000).
 * FORWARD_TEST_EVENTS and FORWARD_TEST_BATCH run another scale (200000 and 1000: the issue's own).
 */
const EVENTS = Number(process.env.FORWARD_TEST_EVENTS ?? 20_000);
const BATCH = Number(process.env.FORWARD_TEST_BATCH ?? 100);
const KILLS = 5;

let sandbox: RunningSandbox;
const t = tempDir('md-forward-kill-');
beforeAll(async () => {
  sandbox = await startSandbox({ seed: 46 });
});
afterAll(async () => {
  await sandbox.close();
  t.cleanup();
});

/**
 * `mediadesk audit forward`, SIGKILLed once its stderr has told `after.count` lines matching
 * `after.line`: acknowledged batches, or a failed request waiting to be sent again (where a
 * watermark moved too early would pass events the sink never took). Never killed when null.
 */
function forwardRun(
  env: NodeJS.ProcessEnv,
  after: { line: RegExp; count: number } | null,
): Promise<{ code: number | null; killed: boolean; err: string }> {
  const child = spawn(process.execPath, [BIN, 'audit', 'forward'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let killed = false;
  child.stdout!.resume();
  child.stderr!.on('data', (d) => {
    err += d;
    if (after && !killed && (err.match(after.line)?.length ?? 0) >= after.count) killed = child.kill('SIGKILL');
  });
  return new Promise((res) => child.once('exit', (code) => res({ code, killed, err })));
}

type Wm = { sink_id: string; wm_ts: number | null; wm_event_id: string | null };

it(
  `forwards ${EVENTS} events (${BATCH} a request) to HEC and _bulk through 20% failures and ${KILLS} SIGKILLs, losing none`,
  { timeout: 600_000 },
  async () => {
    const dbPath = join(t.dir, 'audit.db');
    fillArchive(dbPath, EVENTS).store.close();
    new SettingsService(openSettingsFile(t.dir)).set({
      auditSinks: [
        {
          kind: 'splunk-hec',
          id: 'hec',
          url: sandbox.url,
          source: 'mediadesk',
          sourcetype: 'mediadesk:audit',
          enabled: true,
        },
        { kind: 'opensearch', id: 'os', url: sandbox.url, index: 'audit', enabled: true },
      ],
    });
    await json(`${sandbox.url}/__sandbox/faults`, {
      siemRate429: 0.1,
      siemRate503: 0.1,
      retryAfterSec: 0,
      hecAck: true,
    });
    const env = {
      MEDIADESK_HOME: t.dir,
      MEDIADESK_AUDIT_FORWARD_BATCH: String(BATCH),
      [sinkSecretEnv('hec')]: SANDBOX_HEC_TOKEN,
    };

    const db = new Database(dbPath, { readonly: true });
    // SQLite orders event_id by its bytes, as comparePlaces does.
    const archive = db.prepare('SELECT ts, event_id AS eventId FROM events ORDER BY ts, event_id').all() as {
      ts: number;
      eventId: string;
    }[];
    const received = async () => ({
      hec: new Set((await json<{ ids: string[] }>(`${sandbox.url}/__sandbox/siem/hec/ids`)).ids),
      os: new Set((await json<{ ids: string[] }>(`${sandbox.url}/__sandbox/siem/bulk/audit/ids`)).ids),
    });
    /** Every event at or before a sink's watermark is at the sink. */
    const checkWatermarks = async () => {
      const got = await received();
      for (const w of db.prepare('SELECT sink_id, wm_ts, wm_event_id FROM forward_sinks').all() as Wm[]) {
        if (w.wm_ts === null) continue;
        const mark = { ts: w.wm_ts, eventId: w.wm_event_id! };
        const passed = archive.filter((e) => comparePlaces(e, mark) <= 0);
        const missing = passed.filter((e) => !got[w.sink_id as 'hec' | 'os'].has(e.eventId));
        expect(missing, `${w.sink_id}: watermark passed undelivered events`).toEqual([]);
      }
    };

    // Kills in both sinks' runs (HEC first, then OpenSearch): after a number of a sink's acknowledged
    // batches (a third of them), or in a retry's wait (Retry-After: 1 s), which comes about every fifth
    // request (20% failures). Each run resumes where the last left off.
    const batches = Math.ceil(EVENTS / BATCH);
    const step = Math.max(2, Math.round(batches * 0.3));
    const retries = Math.max(2, Math.round(step / 5));
    const RETRY = /trying again in/g;
    const kill = [
      { line: RETRY, count: retries },
      { line: /sink hec: \d+ delivered, /g, count: step },
      { line: RETRY, count: retries },
      { line: /sink os: \d+ delivered, /g, count: step },
      { line: RETRY, count: retries },
    ];
    let kills = 0;
    const killedIn = new Set<string>();
    for (const after of kill) {
      const r = await forwardRun(env, after);
      if (r.killed) kills++;
      if (r.killed) killedIn.add(/sink os:/.test(r.err) ? 'os' : 'hec');
      await checkWatermarks();
    }
    expect(kills).toBe(KILLS);
    expect([...killedIn].sort()).toEqual(['hec', 'os']);
    const last = await forwardRun(env, null);
    expect(last.err).not.toMatch(/error|failed/i);
    expect(last.code).toBe(0);
    await checkWatermarks();

    const got = await received();
    const ids = archive.map((e) => e.eventId);
    expect(got.hec.size).toBe(EVENTS);
    expect(got.os.size).toBe(EVENTS);
    expect(ids.every((id) => got.hec.has(id) && got.os.has(id))).toBe(true);
    // Copies are of the same events only, told apart by event_id: HEC's events beyond the unique ones, _bulk's 409s.
    const s = await json<{
      hec: { events: number; duplicates: number; refusedRequests: number; maxBatch: number };
      bulk: { refusedRequests: number; maxBatch: number };
    }>(`${sandbox.url}/__sandbox/siem`);
    expect(s.hec.events - s.hec.duplicates).toBe(EVENTS);
    expect(s.hec.refusedRequests).toBeGreaterThan(0);
    expect(s.bulk.refusedRequests).toBeGreaterThan(0);
    expect(Math.max(s.hec.maxBatch, s.bulk.maxBatch)).toBeLessThanOrEqual(BATCH);
    const status = db
      .prepare('SELECT sink_id, failing_since, (SELECT count(*) FROM forward_dead) AS dead FROM forward_sinks')
      .all();
    expect(status).toEqual([
      { sink_id: 'hec', failing_since: null, dead: 0 },
      { sink_id: 'os', failing_since: null, dead: 0 },
    ]);
    db.close();
  },
);
