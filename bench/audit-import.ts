import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AuditStore } from '../electron/core/audit/store.ts';
import { importFile } from '../electron/core/audit/import.ts';
import { STAGE_COLUMNS, stageFile } from '../electron/core/audit/stage.ts';
import { writeNdjson, type BenchOrder } from './audit-data.ts';
import { KEY_SLOTS } from '../electron/core/audit/keys.ts';

/**
 * Import of N NDJSON events into a fresh audit.db: wall time and peak RSS. The file is written by
 * a child process first so its memory does not count. `--order newest-first` writes the events as
 * the API pages them (an export), else in random date order (the staged path). `--cached-windows K`
 * first imports, untimed, N events of each of the K spans before (other ids), oldest first, and
 * then times the import into that cache: the next month's export into a cache holding the last K.
 * `--bare`: the floor instead: the same rows, staged first untimed by the import's own reader and
 * laid out in insertion order with the keys the import gives them, then timed as they go into the
 * same tables (events, events_raw, events_fts) of a fresh cache with every index but the rowid
 * dropped, by plain INSERT ... SELECT in the import's transactions of 50,000. `--stage-ids` (with
 * `--bare`): under the staged ids instead, so every batch appends; the import cannot store them so.
 * `--paired P`: P pairs, import then floor, each a child process of this script with the other
 * arguments, alternated so both see the same load; prints each run and the medians of the ratios.
 * `--keep DIR --prepare`: writes the file and lays out the floor's rows in DIR, untimed, and exits;
 * then `--keep DIR --reuse` (with or without `--bare`) reuses them, so a whole process is the import
 * or the floor and nothing else, for timing from outside.
 * Usage: node bench/audit-import.ts [N] [--keep DIR [--prepare | --reuse]] [--order random|newest-first] [--cached-windows K] [--bare [--stage-ids]] [--paired P]
 */
const args = process.argv.slice(2);
if (args[0] === '--write') {
  await writeNdjson(args[1], Number(args[2]), args[3] as BenchOrder, Number(args[4]));
  process.exit(0);
}
if (args.includes('--paired')) {
  const at = args.indexOf('--paired');
  const pairs = Number(args[at + 1]);
  const rest = args.filter((_, i) => i !== at && i !== at + 1);
  const run = (
    extra: string[],
  ): { seconds: number; cpuSeconds: number; mainThreadCpuSeconds: number; peakRssMb: number } => {
    const r = spawnSync(process.execPath, [import.meta.filename, ...rest, ...extra], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bench run failed: ${r.stderr}`);
    const line = r.stdout.trim().split('\n').pop()!;
    console.log(line);
    return JSON.parse(line);
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const wall: number[] = [];
  const cpu: number[] = [];
  const mainCpu: number[] = [];
  const rss: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const imp = run([]);
    const floor = run(['--bare']);
    wall.push(imp.seconds / floor.seconds);
    cpu.push(imp.cpuSeconds / floor.cpuSeconds);
    mainCpu.push(imp.mainThreadCpuSeconds / floor.cpuSeconds);
    rss.push(imp.peakRssMb);
  }
  const fix = (xs: number[]) => xs.map((x) => +x.toFixed(2));
  console.log(
    JSON.stringify({
      pairs,
      wallRatios: fix(wall),
      cpuRatios: fix(cpu),
      medianWallRatio: +median(wall).toFixed(2),
      medianCpuRatio: +median(cpu).toFixed(2),
      // The import's own thread against the floor's CPU: the ratio where the reading thread has a free core.
      mainThreadCpuRatios: fix(mainCpu),
      medianMainThreadCpuRatio: +median(mainCpu).toFixed(2),
      importPeakRssMb: rss,
      loadAvg1m: +(await import('node:os')).loadavg()[0].toFixed(1),
    }),
  );
  process.exit(0);
}
const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const keep = args.includes('--keep') ? args[args.indexOf('--keep') + 1] : null;
const order: BenchOrder = args.includes('--order') ? (args[args.indexOf('--order') + 1] as BenchOrder) : 'random';
const cachedWindows = args.includes('--cached-windows') ? Number(args[args.indexOf('--cached-windows') + 1]) : 0;
const prepare = args.includes('--prepare');
const reuse = args.includes('--reuse');
const bare = args.includes('--bare') || prepare;
// The floor's rows under the staged ids (appended in rising order) instead of the import's date keys.
const bareStageIds = args.includes('--stage-ids');
const BARE_BATCH = 50_000;
const dir = keep ?? mkdtempSync(join(tmpdir(), 'md-audit-bench-'));
mkdirSync(dir, { recursive: true });
const write = (window: number): string => {
  const file = join(dir, `events-${count}-${order}${window ? `-window${window}` : ''}.ndjson`);
  if (reuse && existsSync(file)) return file;
  const w = spawnSync(process.execPath, [import.meta.filename, '--write', file, String(count), order, String(window)], {
    stdio: 'inherit',
  });
  if (w.status !== 0) throw new Error('writing the events failed');
  return file;
};
const file = write(0);

const dbPath = join(dir, 'audit.db');
for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });
const store = new AuditStore(dbPath);
for (let k = cachedWindows; k > 0; k--) {
  const before = write(k);
  const r = await importFile(store, before);
  if (r.accepted !== count) throw new Error(`window ${k} stored ${r.accepted} of ${count} events`);
  rmSync(before);
}
const cachedBefore = store.counts().events;
// The file's pages are still being written back to disk after a fresh write; the import would
// compete with that I/O, so it waits for it, and the clock measures the import alone.
spawnSync('sync');
let stageRows = 0;
let bareBatches: [number, number][] = [];
if (bare) {
  const stagePath = join(dir, `bare-stage-${count}-${order}${bareStageIds ? '-ids' : ''}.db`);
  const laidOut = reuse && existsSync(stagePath);
  if (!laidOut) {
    rmSync(stagePath, { force: true });
    await stageFile({ path: file, format: 'ndjson', stagePath, batchSize: BARE_BATCH }, (b) => void (stageRows = b.hi));
  }
  for (const idx of store.db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = 'events'")
    .pluck()
    .all() as string[])
    store.db.exec(`DROP INDEX ${idx}`);
  store.db.exec(`ATTACH DATABASE '${stagePath.replaceAll("'", "''")}' AS stage`);
  bareBatches = laidOut ? batchSpans(count) : bareRows(stageRows);
  spawnSync('sync');
  if (prepare) {
    store.close();
    console.log(JSON.stringify({ prepared: dir, file, stage: stagePath }));
    process.exit(0);
  }
}
const t0 = performance.now();
const c0 = process.cpuUsage();
// This thread alone: the import's critical path where the reading thread has a core of its own.
const m0 = process.threadCpuUsage();
const report = bare ? bareInsert() : await importFile(store, file);
const seconds = (performance.now() - t0) / 1000;
const c1 = process.cpuUsage(c0);
const m1 = process.threadCpuUsage(m0);
const cpuSeconds = (c1.user + c1.system) / 1e6;
store.db.pragma('optimize');
store.close();
// Over the whole process: with --cached-windows, the untimed imports' peak too.
const peakMb = process.resourceUsage().maxRSS / 1024;
const result = {
  count,
  order,
  cachedBefore,
  seconds: +seconds.toFixed(2),
  cpuSeconds: +cpuSeconds.toFixed(2),
  mainThreadCpuSeconds: +((m1.user + m1.system) / 1e6).toFixed(2),
  // The reading thread and SQLite's sorting helpers.
  otherThreadsCpuSeconds: +(cpuSeconds - (m1.user + m1.system) / 1e6).toFixed(2),
  loadAvg1m: +(await import('node:os')).loadavg()[0].toFixed(1),
  eventsPerSec: Math.round(count / seconds),
  peakRssMb: Math.round(peakMb),
  accepted: report.accepted,
  rejected: report.rejected,
  fatal: report.fatal,
};
console.log(JSON.stringify(bare ? { ...result, bare: true } : result));
if (!keep) rmSync(dir, { recursive: true, force: true });

/**
 * Untimed: the staged rows copied into `stage.bare_rows` in the order the insert takes them, each
 * with the key the import gives it (keys.ts: the date's millisecond times 1024 plus its place
 * among that millisecond's rows in file order), batch by batch in key order: a newest-first file
 * puts each batch below the ones before, as the import must. Returns each batch's span of positions.
 */
function bareRows(rows: number): [number, number][] {
  const key = bareStageIds
    ? 'id'
    : `CAST(ts AS INTEGER) * ${KEY_SLOTS} + row_number() OVER (PARTITION BY ts ORDER BY id) - 1`;
  // The keys sorted alone, then the wide rows copied in their order: sorting the rows themselves took ~250 MB more.
  const columns = STAGE_COLUMNS.join(', ');
  store.db.exec(`CREATE TEMP TABLE bare_keys (pos INTEGER PRIMARY KEY, batch, id, seq);
    INSERT INTO temp.bare_keys (batch, id, seq) SELECT id / ${BARE_BATCH}, id, ${key} FROM stage.rows ORDER BY 1, 3;
    CREATE TABLE stage.bare_rows (pos INTEGER PRIMARY KEY, batch, seq, ${columns});
    INSERT INTO stage.bare_rows (pos, batch, seq, ${columns})
      SELECT k.pos, k.batch, k.seq, ${STAGE_COLUMNS.map((c) => `r.${c}`).join(', ')}
      FROM temp.bare_keys AS k JOIN stage.rows AS r ON r.id = k.id ORDER BY k.pos;
    DROP TABLE temp.bare_keys`);
  const off = store.db
    .prepare(
      `SELECT count(*) FROM stage.bare_rows WHERE seq - CAST(ts AS INTEGER) * ${KEY_SLOTS} NOT BETWEEN 0 AND ${KEY_SLOTS - 1}`,
    )
    .pluck()
    .get() as number;
  if (off && !bareStageIds) throw new Error(`${off} staged rows have no date key: not a bench file`);
  return batchSpans(rows);
}

/** Each batch's span of positions in `stage.bare_rows`, checked to cover all `rows`. */
function batchSpans(rows: number): [number, number][] {
  const spans = store.db.prepare('SELECT min(pos), max(pos) + 1 FROM stage.bare_rows GROUP BY batch ORDER BY batch');
  const out = spans.raw().all() as [number, number][];
  if (out.reduce((n, [lo, hi]) => n + hi - lo, 0) !== rows) throw new Error("the floor's rows miss staged ones");
  return out;
}

/** The staged rows into the cache's tables, indexes dropped: what any import of them must at least do. */
function bareInsert() {
  const from = 'FROM stage.bare_rows WHERE pos >= ? AND pos < ?';
  const events = store.db.prepare(`INSERT INTO events
    (seq, event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin)
    SELECT seq, eventId, ts, eventType, memberEmail, memberId, memberType, verb, status, category, groupId, folderRef, projectRef, requestId, correlationId, resourceId, 'import'
    ${from}`);
  const raw = store.db.prepare(`INSERT INTO events_raw (seq, raw) SELECT seq, raw ${from}`);
  const text = store.db.prepare(`INSERT INTO events_fts (rowid, body) SELECT seq, text ${from}`);
  for (const [lo, hi] of bareBatches)
    store.db.transaction(() => {
      for (const s of [events, raw, text]) s.run(lo, hi);
    })();
  const stored = store.db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  if (stored !== count) throw new Error(`the bare insert stored ${stored} of ${count} events`);
  return { accepted: stored, rejected: 0, fatal: null };
}
