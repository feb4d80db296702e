import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { AuditFilters } from '../shared/contract/audit.ts';
import { AuditStore } from '../electron/core/audit/store.ts';
import { queryEvents } from '../electron/core/audit/query.ts';

/**
 * p50/p95 of first pages (100 rows, newest first) over an audit.db of N events, filtered and
 * full-text. Usage: node bench/audit-query.ts [N] [--dir DIR] (reuses DIR/audit.db when there).
 */
const args = process.argv.slice(2);
const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : mkdtempSync(join(tmpdir(), 'md-audit-qbench-'));
const dbPath = join(dir, 'audit.db');
if (!existsSync(dbPath)) {
  const r = spawnSync(process.execPath, [join(import.meta.dirname, 'audit-import.ts'), String(count), '--keep', dir], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('building the cache failed');
}
const store = new AuditStore(dbPath);
const total = store.counts().events;

const FILTERED: AuditFilters[] = [
  { eventTypes: ['project.folder.shared'] },
  { memberIds: [17] },
  { memberIds: [3, 9, 41], eventTypes: ['team.member.role_changed', 'creation.image.generated'] },
  { groupIds: [104], from: '2026-03-05', to: '2026-03-09' },
  { folderRefs: ['fld_3_2'] },
  { from: '2026-03-10', to: '2026-03-10' },
  { eventTypes: ['security.api_key.revoked'], from: '2026-03-12' },
];
const SEARCHES: AuditFilters[] = [
  { search: 'member17@bench.test' },
  { search: 'Packaging' },
  { search: 'denied' },
  { search: 'Investor deck', eventTypes: ['project.folder.shared'] },
  { search: 'fld_3_2 viewer' },
  { search: 'Hero*' },
  { search: 'revoked denied', from: '2026-03-08' },
];
/** Parts of names, e-mails and event types, as a person types them (search.ts); reported apart, so fullText stays comparable. */
const PARTS: AuditFilters[] = [
  { search: 'folder' },
  { search: 'role_chan' },
  { search: 'ember17' },
  { search: 'Hero sh' },
  { search: 'admin folder*' },
  { search: 'zzqxv' },
  { search: 'vestor', eventTypes: ['project.folder.shared'] },
];

function measure(list: AuditFilters[], rounds: number): { p50: number; p95: number; max: number; n: number } {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const filters of list) {
      const t = performance.now();
      queryEvents(store.db, { filters, sort: { field: 'date', dir: 'desc' }, limit: 100 });
      times.push(performance.now() - t);
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => +times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  return { p50: at(0.5), p95: at(0.95), max: at(1), n: times.length };
}

measure([...FILTERED, ...SEARCHES, ...PARTS], 1); // warm the page cache
const filtered = measure(FILTERED, 30);
const fullText = measure(SEARCHES, 30);
const parts = measure(PARTS, 30);

/** p50/max of `f` over `rounds` calls, in ms. */
function timed(f: () => unknown, rounds = 30): { p50: number; max: number } {
  const times = Array.from({ length: rounds }, () => {
    const t = performance.now();
    f();
    return performance.now() - t;
  }).sort((a, b) => a - b);
  return { p50: +times[Math.floor(rounds / 2)].toFixed(3), max: +times[rounds - 1].toFixed(3) };
}
// audit.status's counts, which a window showing the cache asks for every few seconds: counted in
// one SELECT (as before), counted as store.counts() does, and store.counts() with nothing changed.
const oneSelect = store.db.prepare('SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM events');
const statusCounts = {
  oneSelect: timed(() => oneSelect.get()),
  subqueries: timed(() =>
    store.db
      .prepare('SELECT (SELECT count(*) FROM events), (SELECT min(ts) FROM events), (SELECT max(ts) FROM events)')
      .get(),
  ),
  unchanged: timed(() => store.counts()),
};
console.log(
  JSON.stringify({ events: total, filtered, fullText, parts, statusCounts, loadAvg1m: +loadavg()[0].toFixed(1) }),
);
store.close();
