import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditFilters, AuditSort } from '../../shared/contract/audit.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { KEY_SLOTS, keysFollowDates } from '../../electron/core/audit/keys.ts';
import { AUDIT_MIGRATIONS } from '../../electron/core/audit/migrations.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import { EVENT_INDEXES, makeEvent, openService, rowOf, shuffle, tempDir, walkPages } from './helpers.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const ndjson = (list: unknown[]) => list.map((e) => JSON.stringify(e)).join('\n') + '\n';
const BASE = Date.UTC(2026, 2, 1);

/** Events in shuffled file order, many sharing one millisecond, so seq order is not file order. */
function shuffled(count: number, sameMs = 7): Record<string, unknown>[] {
  return shuffle(
    Array.from({ length: count }, (_, i) =>
      makeEvent(i, { date: new Date(BASE + Math.floor(i / sameMs) * 1000).toISOString() }),
    ),
    12345,
  );
}

/** A script run as a child process; `said(word)` resolves with its output once that holds `word`. */
function runChild(script: string, stdin: 'ignore' | 'pipe' = 'ignore') {
  const child = spawn(process.execPath, [script], { stdio: [stdin, 'pipe', 'inherit'] });
  let out = '';
  const waiting: { word: string; resolve: (out: string) => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiting) if (out.includes(w.word)) w.resolve(out);
  });
  return {
    child,
    out: () => out,
    exited: new Promise<number | null>((resolve) => child.on('exit', resolve)),
    said: (word: string) =>
      new Promise<string>((resolve) => (out.includes(word) ? resolve(out) : waiting.push({ word, resolve }))),
  };
}

/**
 * A load in a child process, held after `start` (registerLoad: a staged load's record;
 * deferIndexes: a bulk load between two batches) until the parent writes to its stdin; it then
 * ends as a load does (restoreIndexes) and says "done".
 */
async function holdLoad(path: string, start: 'registerLoad' | 'deferIndexes') {
  const script = join(tmp.dir, `child-${start}-${Date.now()}.ts`);
  writeFileSync(
    script,
    `
    import { AuditStore } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/store.ts'))};
    const store = new AuditStore(${JSON.stringify(path)});
    store.${start}();
    process.stdout.write('go\\n');
    process.stdin.on('data', () => { store.restoreIndexes(); store.close(); process.stdout.write('done\\n'); process.exit(0); });
  `,
  );
  const loader = runChild(script, 'pipe');
  await loader.said('go');
  return loader;
}

/** Once every load has ended: nothing set aside, no load recorded, the nine indexes, a sound file. */
function expectLoadsEnded(db: AuditService['store']['db']): void {
  expect(db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
  expect(db.prepare("SELECT count(*) AS n FROM audit_meta WHERE key GLOB 'bulk_owner_*'").get()).toEqual({ n: 0 });
  expect(
    db
      .prepare(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
      )
      .get(),
  ).toEqual({ n: EVENT_INDEXES });
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
}

const SORTS: AuditSort[] = [
  { field: 'date', dir: 'desc' },
  { field: 'date', dir: 'asc' },
];

/** The e-mail search and the member filter select the same events; the filter walks (ts, seq). */
function expectSearchInDateOrder(service: AuditService, extra: AuditFilters = {}): void {
  for (const sort of SORTS) {
    for (const user of [1, 4]) {
      const byFilter = walkPages(service, { ...extra, memberIds: [user] }, sort, 1000);
      expect(byFilter.length).toBeGreaterThan(0);
      expect(walkPages(service, { ...extra, search: `user${user}@example.test` }, sort, 13)).toEqual(byFilter);
      const firstPage = service
        .query({ filters: { ...extra, search: `user${user}@example.test` }, sort, limit: 25 })
        .rows.map((r) => r.eventId);
      expect(firstPage).toEqual(byFilter.slice(0, 25));
    }
  }
}

describe('row keys follow the event date', () => {
  it('full-text pages come newest first (and oldest first) across many matches, with cursors and date ranges', async () => {
    const service = openService(join(tmp.dir, 'order.db'));
    try {
      const [r] = await service.import([tmp.file('shuffled.ndjson', ndjson(shuffled(3000)))], { batchSize: 700 });
      expect(r.accepted).toBe(3000);
      const rows = service.store.db.prepare('SELECT seq, ts FROM events').all() as { seq: number; ts: number }[];
      expect(rows.every((x) => Math.floor(x.seq / KEY_SLOTS) === x.ts)).toBe(true);
      expect(keysFollowDates(service.store.db)).toBe(true);
      expectSearchInDateOrder(service);
      expectSearchInDateOrder(service, { from: '2026-03-01T00:02:00Z', to: '2026-03-01T00:05:00Z' });
      expectSearchInDateOrder(service, { eventTypes: ['project.folder.shared', 'creation.image.generated'] });
      // A common word: newest first and complete.
      const denied = walkPages(service, { search: 'denied' }, SORTS[0], 50);
      const dates = denied.map((id) => service.event(id)!.row.date);
      expect(dates).toEqual([...dates].sort().reverse());
      expect(denied).toHaveLength(300);
    } finally {
      await service.close();
    }
  });

  it('a bulk import (staged, then moved in by date) counts duplicates and stores what a plain import stores', async () => {
    const plain = openService(join(tmp.dir, 'plain.db'));
    const bulk = openService(join(tmp.dir, 'bulk.db'));
    try {
      const list = shuffled(2000);
      const file = tmp.file('bulk.ndjson', ndjson([...list, list[5], list[77]]));
      for (const s of [plain, bulk]) await s.import([tmp.file('first.ndjson', ndjson(list.slice(0, 100)))]);
      const [a] = await plain.import([file]);
      const [b] = await bulk.import([file], { load: 'bulk', batchSize: 300 });
      expect(b).toEqual({ ...a });
      expect(b).toMatchObject({ items: 2002, accepted: 1900, duplicates: 102 });
      // Same rows in the same key order; a duplicate may leave a gap in its millisecond's keys on the bulk path.
      const all = (s: AuditService) =>
        s.store.db
          .prepare(
            'SELECT event_id, ts, event_type, member_email, member_id, group_id, folder_ref, resource_id, (SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw FROM events ORDER BY seq',
          )
          .all();
      expect(all(bulk)).toEqual(all(plain));
      expect(keysFollowDates(bulk.store.db)).toBe(true);
      expectSearchInDateOrder(bulk);
      expect(readdirSync(tmp.dir).filter((f) => f.includes('-stage-'))).toEqual([]);
    } finally {
      await plain.close();
      await bulk.close();
    }
  });

  it.each([
    { how: 'plain import', load: 'rows' as const },
    { how: 'staged import: the crowded batch leaves the SQL copy for the row-by-row path', load: 'staged' as const },
    { how: 'bulk import: the crowded batch leaves the SQL copy for the row-by-row path', load: 'bulk' as const },
  ])(
    'a millisecond with more events than it has keys still stores them all and keeps the order exact ($how)',
    async ({ load }) => {
      const service = openService(join(tmp.dir, `spill-${load}.db`));
      try {
        const crowd = Array.from({ length: KEY_SLOTS + 30 }, (_, i) =>
          makeEvent(10_000 + i, { date: new Date(BASE).toISOString() }),
        );
        const [r] = await service.import([tmp.file(`crowd-${load}.ndjson`, ndjson([...shuffled(200), ...crowd]))], {
          load,
          batchSize: 2000,
        });
        expect(r.accepted).toBe(200 + KEY_SLOTS + 30);
        expect(keysFollowDates(service.store.db)).toBe(false);
        expectSearchInDateOrder(service);
        const n = service.store.db
          .prepare('SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM events_raw) AS raw')
          .get();
        expect(n).toEqual({ events: 200 + KEY_SLOTS + 30, raw: 200 + KEY_SLOTS + 30 });
      } finally {
        await service.close();
      }
    },
  );

  it('migration 7 adds the index of actors without a user id by e-mail; opened while another process loads in bulk, it waits with the indexes set aside and is built when that load ends', async () => {
    const path = join(tmp.dir, 'v6.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 6));
    // A bulk load running in another live process (this test's parent): one index set aside.
    db.exec(
      "INSERT INTO deferred_indexes (name, sql) SELECT name, sql FROM sqlite_master WHERE name = 'events_type_ts'; DROP INDEX events_type_ts",
    );
    db.prepare('INSERT INTO audit_meta (key, value) VALUES (?, ?)').run(`bulk_owner_${process.ppid}`, Date.now());
    db.close();
    const service = openService(path);
    try {
      const sdb = service.store.db;
      const built = () =>
        sdb
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('events_type', 'events_noid_email') ORDER BY name",
          )
          .pluck()
          .all();
      const waiting = () => sdb.prepare('SELECT name FROM deferred_indexes ORDER BY name').pluck().all();
      expect(sdb.pragma('user_version', { simple: true })).toBe(AUDIT_MIGRATIONS.length);
      // Migration 10 put its date-free indexes in their place, waiting the same way.
      expect([built(), waiting()]).toEqual([
        [],
        ['events_email', 'events_folder', 'events_group', 'events_member', 'events_noid_email', 'events_type'],
      ]);
      // That load ends: the last one to finish builds what was set aside, the new index with it.
      sdb.prepare('DELETE FROM audit_meta WHERE key = ?').run(`bulk_owner_${process.ppid}`);
      service.store.restoreIndexes();
      expect([built(), waiting()]).toEqual([['events_noid_email', 'events_type'], []]);
      expect(sdb.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_noid_email'").pluck().get()).toMatch(
        /WHERE member_id IS NULL$/,
      );
    } finally {
      await service.close();
    }
  });

  it('migration 3 re-keys a cache written before it and keeps every event searchable', async () => {
    const path = join(tmp.dir, 'v2.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 2));
    const put = db.prepare(
      `INSERT INTO events (event_id, ts, event_type, member_email, member_id, origin, raw) VALUES (?, ?, ?, ?, ?, 'import', ?)`,
    );
    const text = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    for (const e of shuffled(500)) {
      const r = rowOf(e);
      const info = put.run(r.eventId, r.ts, r.eventType, r.memberEmail, r.memberId, r.raw);
      text.run(info.lastInsertRowid, r.text);
    }
    db.close();
    const service = openService(path);
    try {
      expect(service.store.db.pragma('user_version', { simple: true })).toBe(AUDIT_MIGRATIONS.length);
      const rows = service.store.db.prepare('SELECT seq, ts FROM events').all() as { seq: number; ts: number }[];
      expect(rows).toHaveLength(500);
      expect(rows.every((x) => Math.floor(x.seq / KEY_SLOTS) === x.ts)).toBe(true);
      expectSearchInDateOrder(service);
      expect(service.query({ filters: { search: 'denied' }, sort: SORTS[0], limit: 1000 }).rows).toHaveLength(50);
    } finally {
      await service.close();
    }
  });

  it('migrations 4 and 5 on a cache written at migration 3: raw moves to events_raw, the full-text index loses positions; indexes and search intact', async () => {
    const path = join(tmp.dir, 'v3.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 3));
    const put = db.prepare(
      `INSERT INTO events (seq, event_id, ts, event_type, member_email, member_id, request_id, correlation_id, origin, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'import', ?)`,
    );
    const text = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    const raws = new Map<string, string>();
    const taken = new Map<number, number>();
    for (const e of shuffled(500)) {
      const r = rowOf(e);
      const n = taken.get(r.ts) ?? 0;
      taken.set(r.ts, n + 1);
      const seq = r.ts * KEY_SLOTS + n;
      put.run(seq, r.eventId, r.ts, r.eventType, r.memberEmail, r.memberId, r.requestId, r.correlationId, r.raw);
      text.run(seq, r.text);
      raws.set(r.eventId, r.raw);
    }
    // A bulk import cut short at migration 3: one index set aside, to be built when next opened.
    db.exec(
      "INSERT INTO deferred_indexes (name, sql) SELECT name, sql FROM sqlite_master WHERE name = 'events_type_ts'; DROP INDEX events_type_ts",
    );
    db.close();
    const service = openService(path);
    try {
      const sdb = service.store.db;
      expect(sdb.pragma('user_version', { simple: true })).toBe(AUDIT_MIGRATIONS.length);
      // Migration 5: the full-text index rebuilt without positions, every event in it again.
      expect(sdb.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_fts'").pluck().get()).toMatch(
        /detail = column/,
      );
      expect(
        sdb.prepare('SELECT count(*) FROM events_fts WHERE events_fts MATCH \'"user3@example.test"\'').pluck().get(),
      ).toBe(sdb.prepare("SELECT count(*) FROM events WHERE member_email = 'user3@example.test'").pluck().get());
      expect(
        (sdb.prepare("SELECT name FROM pragma_table_info('events')").pluck().all() as string[]).includes('raw'),
      ).toBe(false);
      expect(sdb.prepare('SELECT count(*) AS n FROM events_raw').get()).toEqual({ n: 500 });
      expect(
        sdb.prepare('SELECT count(*) AS n FROM events LEFT JOIN events_raw AS r USING (seq) WHERE r.raw IS NULL').get(),
      ).toEqual({ n: 0 });
      expect(
        sdb
          .prepare(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
          )
          .get(),
      ).toEqual({ n: EVENT_INDEXES });
      expect(sdb.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
      expect(sdb.pragma('integrity_check', { simple: true })).toBe('ok');
      const detail = service.event('evt_42');
      expect(detail?.event).toEqual(JSON.parse(raws.get('evt_42')!));
      expect(detail?.sameRequestCount).toBeGreaterThan(0);
      expectSearchInDateOrder(service);
      expect(service.query({ filters: { search: 'denied' }, sort: SORTS[0], limit: 1000 }).rows).toHaveLength(50);
      const out = await service.export({
        format: 'ndjson',
        path: join(tmp.dir, 'v3-out.ndjson'),
        filters: {},
        sort: SORTS[0],
      });
      expect(out.rows).toBe(500);
      const [again] = await service.import([tmp.file('v3-more.ndjson', ndjson(shuffled(520)))]);
      expect(again).toMatchObject({ accepted: 20, duplicates: 500 });
      expect(sdb.prepare('SELECT count(*) AS n FROM events_raw').get()).toEqual({ n: 520 });
    } finally {
      await service.close();
    }
  });

  it('migration 6 makes event_id uniqueness an index of its own, keeping every row, key and index', async () => {
    const path = join(tmp.dir, 'v5.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 5));
    const put = db.prepare(
      `INSERT INTO events (seq, event_id, ts, event_type, member_email, member_id, origin) VALUES (?, ?, ?, ?, ?, ?, 'import')`,
    );
    const raw = db.prepare('INSERT INTO events_raw (seq, raw) VALUES (?, ?)');
    const text = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    for (const e of shuffled(200)) {
      const r = rowOf(e);
      const seq =
        r.ts * KEY_SLOTS + (db.prepare('SELECT count(*) FROM events WHERE ts = ?').pluck().get(r.ts) as number);
      put.run(seq, r.eventId, r.ts, r.eventType, r.memberEmail, r.memberId);
      raw.run(seq, r.raw);
      text.run(seq, r.text);
    }
    const rows = db.prepare('SELECT * FROM events ORDER BY seq').all();
    db.close();
    const service = openService(path);
    try {
      const sdb = service.store.db;
      expect(sdb.prepare('SELECT * FROM events ORDER BY seq').all()).toEqual(rows);
      expect(sdb.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_event_id'").pluck().get()).toMatch(
        /CREATE UNIQUE INDEX/,
      );
      expect(
        sdb.prepare("SELECT count(*) FROM sqlite_master WHERE name GLOB 'sqlite_autoindex_events*'").pluck().get(),
      ).toBe(0);
      expect(
        sdb
          .prepare(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
          )
          .get(),
      ).toEqual({ n: EVENT_INDEXES });
      expect(() =>
        sdb
          .prepare(`INSERT INTO events (seq, event_id, ts, event_type, origin) VALUES (1, 'evt_3', 1, 'x', 'import')`)
          .run(),
      ).toThrow(/UNIQUE constraint failed: events.event_id/);
      expect(sdb.pragma('integrity_check', { simple: true })).toBe('ok');
      const [again] = await service.import([tmp.file('v5-more.ndjson', ndjson(shuffled(220)))], { load: 'bulk' });
      expect(again).toMatchObject({ accepted: 20, duplicates: 200 });
      expect(sdb.prepare('SELECT count(*) AS n FROM events_raw').get()).toEqual({ n: 220 });
      expectSearchInDateOrder(service);
    } finally {
      await service.close();
    }
  });

  it('migration 5 upgrades a cache holding a stored event that no longer reads, keeping it', async () => {
    const path = join(tmp.dir, 'v4-odd.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 4));
    const put = db.prepare(`INSERT INTO events (seq, event_id, ts, event_type, origin) VALUES (?, ?, ?, ?, 'import')`);
    const raw = db.prepare('INSERT INTO events_raw (seq, raw) VALUES (?, ?)');
    const good = rowOf(makeEvent(1, { action: { event_type: 'team.member.invited', data: { note: 'findable' } } }));
    put.run(good.ts * KEY_SLOTS, good.eventId, good.ts, good.eventType);
    raw.run(good.ts * KEY_SLOTS, good.raw);
    put.run((good.ts + 1) * KEY_SLOTS, 'evt_broken', good.ts + 1, 'team.member.invited');
    raw.run((good.ts + 1) * KEY_SLOTS, '{"event_id": "evt_broken", "date": ');
    db.close();
    const service = openService(path);
    try {
      expect(service.store.db.pragma('user_version', { simple: true })).toBe(AUDIT_MIGRATIONS.length);
      expect(service.store.counts().events).toBe(2);
      expect(walkPages(service, { search: 'findable' }, SORTS[0], 10)).toEqual([good.eventId]);
      expect(walkPages(service, {}, SORTS[0], 10)).toEqual(['evt_broken', good.eventId]);
    } finally {
      await service.close();
    }
  });

  it('input in date order (either way) is copied in as it is read, shuffled input is held and moved in by date, and both store what a plain import stores', async () => {
    const list = Array.from({ length: 3000 }, (_, i) =>
      makeEvent(i, { date: new Date(BASE + Math.floor(i / 5) * 1000).toISOString() }),
    );
    const variants = {
      oldestFirst: list,
      newestFirst: list.toReversed(),
      shuffled: shuffle(list),
      // Nearly in order: one event out of place per batch stays on the straight path.
      nearly: list.toReversed().map((e, i, a) => (i % 300 === 150 ? a[(i + 1200) % a.length] : e)),
    };
    const all = (s: AuditService) =>
      s.store.db
        .prepare(
          'SELECT event_id, ts, event_type, member_email, member_id, group_id, folder_ref, resource_id, origin, (SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw FROM events ORDER BY seq',
        )
        .all();
    for (const [name, rows] of Object.entries(variants)) {
      const plain = openService(join(tmp.dir, `order-${name}-plain.db`));
      const bulk = openService(join(tmp.dir, `order-${name}-bulk.db`));
      try {
        const file = tmp.file(`order-${name}.ndjson`, ndjson(rows));
        for (const s of [plain, bulk]) await s.import([tmp.file('seed.ndjson', ndjson(list.slice(1000, 1010)))]);
        const stages = new Set<string>();
        const whileReading = new Set<number>();
        const [a] = await plain.import([file], { batchSize: 300 });
        const [b] = await bulk.import([file], {
          load: 'bulk',
          batchSize: 300,
          onProgress: (p) => {
            readdirSync(tmp.dir)
              .filter((f) => f.startsWith(`order-${name}-bulk.db-stage-`))
              .forEach((f) => stages.add(f));
            if (p.items < 3000) whileReading.add(p.accepted);
          },
        });
        expect(b).toEqual(a);
        expect(b).toMatchObject({ rejected: 0, fatal: null, duplicates: name === 'nearly' ? expect.any(Number) : 10 });
        expect(stages.size).toBeGreaterThan(0);
        // In order, the cache grows batch by batch while the file is read; shuffled, only the first batch goes in before the end.
        if (name === 'shuffled') expect(whileReading.size).toBe(1);
        else expect(whileReading.size).toBeGreaterThanOrEqual(9);
        expect(all(bulk)).toEqual(all(plain));
        expect(all(bulk).length).toBe(name === 'nearly' ? 10 + b.accepted : 3000);
        expect(keysFollowDates(bulk.store.db)).toBe(true);
        expectSearchInDateOrder(bulk);
        expect(bulk.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(
          bulk.store.db
            .prepare(
              "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
            )
            .get(),
        ).toEqual({ n: EVENT_INDEXES });
      } finally {
        await plain.close();
        await bulk.close();
      }
    }
  });

  it('a bulk load over dates the cache already holds keeps the unique index live: a re-import skips each duplicate at once', async () => {
    const list = Array.from({ length: 3000 }, (_, i) =>
      makeEvent(i, { date: new Date(BASE + i * 1000).toISOString() }),
    );
    const service = openService(join(tmp.dir, 'reimport.db'));
    try {
      const file = tmp.file('reimport.ndjson', ndjson(list.toReversed()));
      const first: string[][] = [];
      const deferred = () =>
        service.store.db.prepare('SELECT name FROM deferred_indexes ORDER BY name').pluck().all() as string[];
      await service.import([file], { load: 'bulk', batchSize: 500, onProgress: () => first.push(deferred()) });
      expect(first[0]).toContain('events_event_id');
      const size = service.store.db
        .prepare('SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()')
        .pluck()
        .get() as number;
      const seen: { accepted: number; deferred: string[] }[] = [];
      const [again] = await service.import([file], {
        load: 'bulk',
        batchSize: 500,
        onProgress: (p) => seen.push({ accepted: p.accepted, deferred: deferred() }),
      });
      expect(again).toMatchObject({ items: 3000, accepted: 0, duplicates: 3000, rejected: 0 });
      expect(
        seen.every(
          (p) => p.accepted === 0 && p.deferred.length === EVENT_INDEXES - 1 && !p.deferred.includes('events_event_id'),
        ),
      ).toBe(true);
      expect(service.store.db.prepare('SELECT count(*) AS n FROM bulk_rows').get()).toEqual({ n: 0 });
      expect(
        service.store.db
          .prepare('SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()')
          .pluck()
          .get(),
      ).toBeLessThanOrEqual(size * 1.1);
      expect(service.store.counts().events).toBe(3000);
    } finally {
      await service.close();
    }
  });

  it("the unique index follows the file's dates: aside where the cache holds few events, live again where it holds many, and the result is a plain import's", async () => {
    // Cached: 600 events a minute apart. The file, newest first: 1,500 newer events, then the 600
    // cached ones (200 of them altered), then 1,500 older ones, a tenth of a second apart.
    const at = (ms: number) => new Date(BASE + ms).toISOString();
    const cached = Array.from({ length: 600 }, (_, i) => makeEvent(i, { date: at(3_600_000 + i * 60_000) }));
    const newer = Array.from({ length: 1500 }, (_, i) =>
      makeEvent(10_000 + i, { date: at(3_600_000 + 600 * 60_000 + i * 100) }),
    );
    const older = Array.from({ length: 1500 }, (_, i) => makeEvent(20_000 + i, { date: at(i * 100) }));
    const again = cached.map((e, i) => (i % 3 ? e : { ...e, category: 'altered' }));
    const file = tmp.file(
      'windows.ndjson',
      ndjson([...newer, ...again, ...older].toSorted((a, b) => String(b.date).localeCompare(String(a.date)))),
    );
    const all = (s: AuditService) =>
      s.store.db
        .prepare(
          'SELECT seq, event_id, ts, category, (SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw FROM events ORDER BY seq',
        )
        .all();
    const plain = openService(join(tmp.dir, 'windows-plain.db'));
    const bulk = openService(join(tmp.dir, 'windows-bulk.db'));
    try {
      for (const s of [plain, bulk]) await s.import([tmp.file('windows-cached.ndjson', ndjson(cached))]);
      const aside = () =>
        !!bulk.store.db.prepare("SELECT 1 FROM deferred_indexes WHERE name = 'events_event_id'").get();
      const states: boolean[] = [];
      const [b] = await bulk.import([file], { load: 'bulk', batchSize: 300, onProgress: () => states.push(aside()) });
      const [a] = await plain.import([file], { batchSize: 300 });
      expect(b).toEqual(a);
      expect(b).toMatchObject({ items: 3600, accepted: 3000, duplicates: 600, rejected: 0, fatal: null });
      // Newer dates: aside; the cached stretch: live; older dates: aside again.
      const runs = states.filter((v, i) => i === 0 || v !== states[i - 1]);
      expect(runs).toEqual([true, false, true]);
      expect(all(bulk)).toEqual(all(plain));
      expect(bulk.store.db.prepare("SELECT count(*) AS n FROM events WHERE category = 'altered'").get()).toEqual({
        n: 0,
      });
      expect(bulk.store.db.prepare('SELECT count(*) AS n FROM bulk_rows').get()).toEqual({ n: 0 });
      expect(
        bulk.store.db
          .prepare(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
          )
          .get(),
      ).toEqual({ n: EVENT_INDEXES });
      expect(bulk.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      await plain.close();
      await bulk.close();
    }
  });

  it('the unique index is built again at most twice in one load: from the third stretch of cached dates on, it stays live', async () => {
    const HOUR = 3_600_000;
    const at = (ms: number) => new Date(BASE + ms).toISOString();
    const run = (from: number, count: number, step: number, firstId: number) =>
      Array.from({ length: count }, (_, i) => makeEvent(firstId + i, { date: at(from + i * step) }));
    // Cached: three stretches of 600 events a minute apart, 12 hours apart. The file, newest first:
    // new events after each stretch and before the first, and the cached stretches again.
    const cached = [run(HOUR, 600, 60_000, 0), run(13 * HOUR, 600, 60_000, 1000), run(25 * HOUR, 600, 60_000, 2000)];
    const fresh = [
      run(0, 1500, 100, 10_000),
      run(12 * HOUR, 1500, 100, 20_000),
      run(24 * HOUR, 1500, 100, 30_000),
      run(36 * HOUR, 1500, 100, 40_000),
    ];
    const file = tmp.file(
      'stretches.ndjson',
      ndjson([...cached.flat(), ...fresh.flat()].toSorted((a, b) => String(b.date).localeCompare(String(a.date)))),
    );
    const service = openService(join(tmp.dir, 'stretches.db'));
    try {
      await service.import([tmp.file('stretches-cached.ndjson', ndjson(cached.flat()))]);
      const states: boolean[] = [];
      const aside = () =>
        !!service.store.db.prepare("SELECT 1 FROM deferred_indexes WHERE name = 'events_event_id'").get();
      const [r] = await service.import([file], {
        load: 'bulk',
        batchSize: 300,
        onProgress: () => states.push(aside()),
      });
      expect(r).toMatchObject({ items: 7800, accepted: 6000, duplicates: 1800, rejected: 0, fatal: null });
      // Aside, live (first rebuild), aside, live (second rebuild), and live from then on.
      expect(states.filter((v, i) => i === 0 || v !== states[i - 1])).toEqual([true, false, true, false]);
      expectLoadsEnded(service.store.db);
      expect(service.store.counts().events).toBe(7800);
    } finally {
      await service.close();
    }
  });

  it('a bulk transaction spans staged batches: a file in order goes in batchSize rows at a time, whatever the reading side hands over', async () => {
    const list = Array.from({ length: 12_000 }, (_, i) =>
      makeEvent(i, { date: new Date(BASE + i * 1000).toISOString() }),
    );
    const service = openService(join(tmp.dir, 'spans.db'));
    try {
      const seen: number[] = [];
      // The reading side stages at most 5,000 rows at a time; a transaction here is 7,000 or more.
      const [r] = await service.import([tmp.file('spans.ndjson', ndjson(list.toReversed()))], {
        load: 'bulk',
        batchSize: 7000,
        onProgress: (p) => seen.push(p.accepted),
      });
      expect(r).toMatchObject({ items: 12_000, accepted: 12_000, duplicates: 0, rejected: 0, fatal: null });
      expect([...new Set(seen)]).toEqual([0, 10_000, 12_000]);
      expect(keysFollowDates(service.store.db)).toBe(true);
      expect(service.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      await service.close();
    }
  });

  it.each([
    { how: 'shuffled: held in the stage, killed while moving it in by date', order: 'shuffled' },
    { how: 'newest first: copied in as read, killed between batches', order: 'newest-first' },
  ])(
    'a bulk import killed mid-way ($how) leaves the events already cached intact and the file sound',
    async ({ order }) => {
      const path = join(tmp.dir, `killed-${order}.db`);
      let service = openService(path);
      // One cached event in a hundred of the file's dates: too few for the load to keep the unique index live.
      const spread = (i: number) => 1050 + i * 100;
      await service.import([
        tmp.file('before.ndjson', ndjson(Array.from({ length: 300 }, (_, i) => makeEvent(spread(i))))),
      ]);
      const before = service.query({ filters: {}, sort: SORTS[0], limit: 1000 }).rows;
      await service.close();

      const list = Array.from({ length: 40_000 }, (_, i) => makeEvent(1000 + i));
      // Duplicates with other contents, let in while the unique index is set aside: of cached events
      // (shuffled through the file) or of events earlier in the file (newest first, in date order).
      // The cached events are in the list too, unchanged.
      const altered = Array.from({ length: 300 }, (_, i) => makeEvent(spread(i), { category: 'altered' }));
      const rows =
        order === 'shuffled'
          ? shuffle([...list, ...altered])
          : list.reverse().flatMap((e, i) => (i % 100 === 0 ? [e, { ...e, category: 'altered' }] : [e]));
      expect(rows.slice(0, 500).some((e) => e.category === 'altered')).toBe(true);
      const big = tmp.file(`big-${order}.ndjson`, ndjson(rows));
      const script = join(tmp.dir, `child-${order}.ts`);
      writeFileSync(
        script,
        `
      import { AuditStore } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/store.ts'))};
      import { importFile } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/import.ts'))};
      const store = new AuditStore(${JSON.stringify(path)});
      const aside = () => store.db.prepare("SELECT 1 FROM deferred_indexes WHERE name = 'events_event_id'").get() ? 'aside' : 'live';
      await importFile(store, ${JSON.stringify(big)}, { load: 'bulk', batchSize: 500, onProgress: (p) => { if (p.accepted >= 2000) process.stdout.write('go ' + aside() + '\\n'); } });
      process.stdout.write('done\\n');
    `,
      );
      const loader = runChild(script);
      expect(await loader.said('go')).toContain('go aside');
      expect(readdirSync(tmp.dir).filter((f) => f.startsWith(`killed-${order}.db-stage-`)).length).toBeGreaterThan(0);
      loader.child.kill('SIGKILL');
      await loader.exited;

      service = openService(path);
      try {
        expect(service.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
        // The dead import's scratch file is gone.
        expect(readdirSync(tmp.dir).filter((f) => f.startsWith(`killed-${order}.db-stage-`))).toEqual([]);
        expect(service.store.db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
        const indexes = service.store.db
          .prepare(
            "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
          )
          .get() as { n: number };
        expect(indexes.n).toBe(EVENT_INDEXES);
        for (const r of before) expect(service.event(r.eventId)?.row).toEqual(r);
        const db = service.store.db;
        expect(
          db
            .prepare('SELECT count(*) AS n FROM (SELECT event_id FROM events GROUP BY event_id HAVING count(*) > 1)')
            .get(),
        ).toEqual({ n: 0 });
        expect(db.prepare("SELECT count(*) AS n FROM events WHERE category = 'altered'").get()).toEqual({ n: 0 });
        expect(
          db.prepare('SELECT (SELECT count(*) FROM events) - (SELECT count(*) FROM events_raw) AS n').get(),
        ).toEqual({ n: 0 });
        expect(db.prepare('SELECT count(*) AS n FROM bulk_rows').get()).toEqual({ n: 0 });
        const n = service.store.counts().events;
        // Every batch copied before the kill (2,000 rows or more) stays, less the duplicates it let in
        // (about two rows in a hundred); the file holds 40,000 distinct events, the cached ones among them.
        expect(n).toBeGreaterThanOrEqual(2000);
        expect(n).toBeLessThan(40_000);
        expect(
          service.store.db.prepare("INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 0)").run()
            .changes,
        ).toBeGreaterThanOrEqual(0);
      } finally {
        await service.close();
      }
    },
  );
  it('another process opening the cache during a bulk import reads it and leaves the set-aside indexes to the importer', async () => {
    const path = join(tmp.dir, 'shared.db');
    const list = Array.from({ length: 40_000 }, (_, i) => makeEvent(1000 + i));
    const big = tmp.file('shared-big.ndjson', ndjson(list.toReversed()));
    const script = join(tmp.dir, 'child-shared.ts');
    writeFileSync(
      script,
      `
      import { AuditStore } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/store.ts'))};
      import { importFile } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/import.ts'))};
      const store = new AuditStore(${JSON.stringify(path)});
      let said = false;
      const r = await importFile(store, ${JSON.stringify(big)}, { load: 'bulk', batchSize: 200, onProgress: (p) => { if (p.accepted >= 2000 && !said) { said = true; process.stdout.write('go\\n'); } } });
      store.close();
      process.stdout.write('done ' + r.accepted + '\\n');
    `,
    );
    const loader = runChild(script);
    await loader.said('go');
    // The app (or the CLI) opens the cache mid-import: it reads, and does not build the indexes the importer set aside.
    const reader = openService(path);
    try {
      expect(loader.out()).not.toMatch(/done/);
      expect(reader.store.db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: EVENT_INDEXES });
      expect(reader.query({ filters: { search: 'denied' }, sort: SORTS[0], limit: 5 }).rows.length).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
    expect(await loader.exited).toBe(0);
    expect(loader.out()).toMatch(/done 40000/);
    const after = openService(path);
    try {
      expectLoadsEnded(after.store.db);
      expect(after.store.counts().events).toBe(40_000);
    } finally {
      await after.close();
    }
  });

  it('a staged load in another process keeps a bulk load from setting the unique index aside; the last to finish builds the rest', async () => {
    const path = join(tmp.dir, 'staged-beside.db');
    await openService(path).close();
    // The staged load's record, held until the parent says "end", as a staged load holds it until its last batch.
    const loader = await holdLoad(path, 'registerLoad');
    const service = openService(path);
    try {
      const deferred = () =>
        service.store.db.prepare('SELECT name FROM deferred_indexes ORDER BY name').pluck().all() as string[];
      const seen: string[][] = [];
      const list = Array.from({ length: 3000 }, (_, i) => makeEvent(i));
      const [r] = await service.import([tmp.file('beside.ndjson', ndjson([...list, list[7]].toReversed()))], {
        load: 'bulk',
        batchSize: 500,
        onProgress: () => seen.push(deferred()),
      });
      expect(r).toMatchObject({ items: 3001, accepted: 3000, duplicates: 1, rejected: 0 });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((names) => names.length === EVENT_INDEXES - 1 && !names.includes('events_event_id'))).toBe(
        true,
      );
      // The staged load is still running: the eight indexes wait for it.
      expect(deferred()).toHaveLength(EVENT_INDEXES - 1);
    } finally {
      await service.close();
    }
    loader.child.stdin!.end('end\n');
    expect(await loader.exited).toBe(0);
    expect(loader.out()).toMatch(/done/);
    const after = openService(path);
    try {
      expectLoadsEnded(after.store.db);
      // The bulk load's full-text settings were put back by the staged load, the last to finish.
      expect(after.store.db.prepare("SELECT v FROM events_fts_config WHERE k = 'automerge'").pluck().get()).toBe(4);
      expect(after.store.counts().events).toBe(3000);
    } finally {
      await after.close();
    }
  });

  it('a small import while a bulk load elsewhere has the unique index aside reports a repeated event as a duplicate, as the repair will treat it', async () => {
    const path = join(tmp.dir, 'aside-beside.db');
    const list = Array.from({ length: 400 }, (_, i) => makeEvent(i));
    const first = openService(path);
    try {
      await first.import([tmp.file('aside-first.ndjson', ndjson(list.slice(0, 300)))]);
    } finally {
      await first.close();
    }
    // A bulk load's state between two batches: every index set aside, the load recorded.
    const loader = await holdLoad(path, 'deferIndexes');
    const service = openService(path);
    try {
      expect(service.store.db.prepare('SELECT name FROM deferred_indexes').pluck().all()).toContain('events_event_id');
      // 100 cached events repeated, 100 new ones, and one of those twice.
      const [r] = await service.import([tmp.file('aside-small.ndjson', ndjson([...list.slice(200, 400), list[350]]))]);
      expect(r).toMatchObject({ items: 201, accepted: 100, duplicates: 101, rejected: 0 });
      expect(service.store.counts().events).toBe(400);
    } finally {
      await service.close();
    }
    loader.child.stdin!.end('end\n');
    expect(await loader.exited).toBe(0);
    const after = openService(path);
    try {
      expectLoadsEnded(after.store.db);
      expect(
        after.store.db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM events').get(),
      ).toEqual({ rows: 400, ids: 400 });
    } finally {
      await after.close();
    }
  });
});
