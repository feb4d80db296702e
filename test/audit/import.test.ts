import { afterAll, beforeEach, afterEach, describe, expect, it, vi } from 'vitest';
import { readdirSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecord } from '../../electron/core/audit/export.ts';
import { CSV_COLUMNS, CsvParser } from '../../electron/core/audit/formats/csv.ts';
import type { Parsed } from '../../electron/core/audit/formats/parsed.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import {
  cacheSnapshot,
  deepEventLine,
  EVENT_INDEXES,
  fillDisk,
  makeEvent,
  openService,
  rowOf,
  shuffle,
  smallDisk,
  tempDir,
} from './helpers.ts';
import { MAX_EVENT_BYTES, MAX_EVENT_DEPTH } from '../../electron/core/audit/event.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

let service: AuditService;
let n = 0;
beforeEach(() => {
  service = openService(join(tmp.dir, `cache-${++n}.db`));
});
afterEach(() => service.close());

const ids = () =>
  (service.store.db.prepare('SELECT event_id FROM events ORDER BY event_id').all() as { event_id: string }[]).map(
    (r) => r.event_id,
  );
const events = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => makeEvent(from + k));
const ndjson = (list: unknown[]) => list.map((e) => JSON.stringify(e)).join('\n') + '\n';
const csv = (list: Record<string, unknown>[]) => CSV_COLUMNS.join(',') + '\r\n' + list.map(csvRecord).join('');

async function importOne(name: string, content: string | Buffer) {
  const [r] = await service.import([tmp.file(`${n}-${name}`, content)]);
  return r;
}

describe('import: each format', () => {
  it('reads NDJSON, one event per line, and NDJSON lines that are API pages', async () => {
    const page = JSON.stringify({ data: events(10, 15), meta: { next_cursor: null } });
    const r = await importOne('a.ndjson', ndjson(events(0, 10)) + page + '\n');
    expect(r).toMatchObject({ format: 'ndjson', items: 15, accepted: 15, rejected: 0, fatal: null });
    expect(ids()).toHaveLength(15);
  });

  it('reads a JSON array of events, an API page and concatenated pages', async () => {
    expect(await importOne('arr.json', JSON.stringify(events(0, 5), null, 2))).toMatchObject({
      format: 'json',
      accepted: 5,
      rejected: 0,
      fatal: null,
    });
    const page = (a: number, b: number) =>
      JSON.stringify({ meta: { pagination: { total: 99 }, next_cursor: 'x' }, data: events(a, b) });
    expect(await importOne('page.json', page(5, 9))).toMatchObject({ format: 'json', accepted: 4, fatal: null });
    expect(await importOne('pages.json', page(9, 12) + '\n' + page(12, 14))).toMatchObject({
      accepted: 5,
      fatal: null,
    });
    expect(await importOne('array-of-pages.json', `[${page(14, 16)}, ${page(16, 18)}]`)).toMatchObject({
      accepted: 4,
      fatal: null,
    });
    expect(ids()).toHaveLength(18);
  });

  it('reads RFC 4180 CSV: quoted fields with commas, quotes and newlines, JSON cells, CRLF', async () => {
    const tricky = makeEvent(1, { category: 'a, "quoted"\nmultiline\r\nvalue' });
    const r = await importOne('a.csv', csv([makeEvent(0), tricky, makeEvent(2)]));
    expect(r).toMatchObject({ format: 'csv', items: 3, accepted: 3, rejected: 0, fatal: null });
    const d = service.event('evt_1')!;
    expect(d.event).toMatchObject({ category: 'a, "quoted"\nmultiline\r\nvalue', member: { user_id: 2 } });
    expect((d.event.action as Record<string, unknown>).new_state).toEqual({ role: 'admin' });
    expect(d.row.groupId).toBe(102);
  });

  it('maps short and flattened CSV headers and reports columns it ignores', async () => {
    const r = await importOne(
      'short.csv',
      'event_id,date,event_type,user_id,email,data.group_id,action.data.folder_reference,colour\n' +
        'x1,2026-03-01T10:00:00Z,team.member.invited,7,a@b.test,104,fld_9,red\n',
    );
    expect(r).toMatchObject({ accepted: 1, rejected: 0 });
    expect(r.warnings.join()).toContain('colour');
    expect(service.event('x1')!.row).toMatchObject({
      memberId: 7,
      memberEmail: 'a@b.test',
      groupId: 104,
      folderRef: 'fld_9',
      eventType: 'team.member.invited',
    });
  });

  it('detects the format from the content when the extension says nothing', async () => {
    expect((await importOne('export.txt', ndjson(events(0, 3)))).format).toBe('ndjson');
    expect((await importOne('export2.txt', JSON.stringify(events(3, 5)))).format).toBe('json');
    expect((await importOne('export3.txt', csv(events(5, 6)))).format).toBe('csv');
    expect(ids()).toHaveLength(6);
  });
});

describe('import: files from other tools and systems', () => {
  it("CSV led by Excel's `sep=;` or `sep=,` line: read with that separator, and not reported as stopped", async () => {
    const semi =
      'sep=;\r\nevent_id;date;category;action.event_type;action.data\r\n' +
      'evt_0;2026-03-01T10:00:00Z;a, b;team.member.invited;"{""group_id"":1,""x"":2}"\r\n' +
      'evt_1;2026-03-01T11:00:00Z;c;team.member.invited;\r\n';
    expect(await importOne('semi.csv', semi)).toMatchObject({
      format: 'csv',
      items: 2,
      accepted: 2,
      rejected: 0,
      fatal: null,
    });
    expect(await importOne('comma.csv', `\ufeffsep=,\r\n${csv(events(2, 4))}`)).toMatchObject({
      items: 2,
      accepted: 2,
      fatal: null,
    });
    expect(ids()).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3']);
    expect(service.event('evt_0')!.event).toMatchObject({ category: 'a, b', action: { data: { group_id: 1, x: 2 } } });
  });

  it('a bad header stops the file: no row after it is read, even within the same read chunk', async () => {
    const r = await importOne('bad-header.csv', `what,ever\r\n${csv(events(0, 2))}`);
    expect(r).toMatchObject({ items: 0, accepted: 0 });
    expect(r.fatal).toMatch(/^the header row lacks event_id/);
    expect(ids()).toEqual([]);
  });

  it('CR-only line ends (old Mac files) in NDJSON and CSV, with the lines counted right', async () => {
    const cr = (t: string) => t.replace(/\r?\n/g, '\r');
    expect(await importOne('mac.ndjson', cr(ndjson(events(0, 3))))).toMatchObject({
      format: 'ndjson',
      items: 3,
      accepted: 3,
      fatal: null,
    });
    expect(await importOne('mac.txt', cr(ndjson(events(3, 5))))).toMatchObject({ format: 'ndjson', accepted: 2 });
    expect(await importOne('mac.csv', cr(csv(events(5, 7))))).toMatchObject({ format: 'csv', accepted: 2 });
    const bad = await importOne('mac-bad.ndjson', cr(`${ndjson(events(7, 8))}{oops\n${ndjson(events(8, 9))}`));
    expect(bad).toMatchObject({ accepted: 2, rejected: 1, fatal: null });
    expect(bad.rejects[0].line).toBe(2);
    // CRLF split between two read chunks is one line end, not two.
    const crlf = await importOne('crlf.ndjson', `${ndjson(events(9, 10)).replace('\n', '\r\n')}{oops\r\n`);
    expect(crlf.rejects.map((x) => x.line)).toEqual([2]);
    expect(ids()).toHaveLength(10);
  });

  it('an event_id with bytes that are not UTF-8 is refused by its line, never merged with another', async () => {
    const line = (id: Buffer) =>
      Buffer.concat([
        Buffer.from('{"event_id":"evt_'),
        id,
        Buffer.from('","date":"2026-03-01T10:00:00Z","category":"x","action":{"event_type":"a.b"}}\n'),
      ]);
    const r = await importOne(
      'latin1.ndjson',
      Buffer.concat([line(Buffer.from([0xff])), line(Buffer.from([0xfe])), line(Buffer.from('ok'))]),
    );
    expect(r).toMatchObject({ items: 3, accepted: 1, duplicates: 0, rejected: 2 });
    expect(r.rejects.map((x) => [x.line, x.reason])).toEqual([
      [1, 'event_id holds bytes that are not UTF-8 (read as \ufffd), so it cannot be told from another id'],
      [2, 'event_id holds bytes that are not UTF-8 (read as \ufffd), so it cannot be told from another id'],
    ]);
    expect(ids()).toEqual(['evt_ok']);
  });
});

describe('import: deduplication and what is already cached', () => {
  it.each([
    { how: 'row by row', load: 'rows' as const },
    { how: 'staged: every index live, each duplicate skipped at once', load: 'staged' as const },
    { how: 'bulk load: let in while the unique index is set aside, removed at its end', load: 'bulk' as const },
  ])(
    'counts an event_id already cached (or repeated in the file) as a duplicate and never changes the cached row ($how)',
    async ({ load }) => {
      await importOne('first.ndjson', ndjson(events(0, 4)));
      const before = service.event('evt_2')!.event;
      const altered = makeEvent(2, { category: 'tampered' });
      // 36 new events in the same dates: the cache holds too few of the file's dates for a bulk load to keep the unique index live.
      const aside: string[][] = [];
      const recorded: number[] = [];
      const [r] = await service.import(
        [
          tmp.file(
            `${n}-second.ndjson`,
            ndjson([...events(3, 40), altered, makeEvent(5, { category: 'second copy' })]),
          ),
        ],
        {
          load,
          onProgress: () => {
            aside.push(service.store.db.prepare('SELECT name FROM deferred_indexes').pluck().all() as string[]);
            recorded.push(
              service.store.db
                .prepare("SELECT count(*) FROM audit_meta WHERE key GLOB 'bulk_owner_*'")
                .pluck()
                .get() as number,
            );
          },
        },
      );
      if (load === 'bulk') expect(aside.some((names) => names.includes('events_event_id'))).toBe(true);
      // Staged: no index set aside, and the load recorded so a bulk load elsewhere leaves the unique index live.
      if (load === 'staged')
        expect(aside.every((names) => names.length === 0) && recorded.every((k) => k === 1)).toBe(true);
      if (load === 'rows') expect(recorded.every((k) => k === 0)).toBe(true);
      expect(r).toMatchObject({ items: 39, accepted: 36, duplicates: 3, rejected: 0 });
      expect(service.event('evt_2')!.event).toEqual(before);
      // Repeated in the file: the first one read stays.
      expect(service.event('evt_5')!.event).toEqual(makeEvent(5));
      expect(ids()).toHaveLength(40);
      expect(service.store.db.prepare('SELECT count(*) AS n FROM events_raw').get()).toEqual({ n: 40 });
      expect(
        service.query({ filters: { search: 'tampered' }, sort: { field: 'date', dir: 'asc' }, limit: 10 }).rows,
      ).toEqual([]);
    },
  );
});

/** Segments of the full-text index: each has at least its first leaf listed in the _idx table. */
const ftsSegments = () =>
  (service.store.db.prepare('SELECT count(DISTINCT segid) AS n FROM events_fts_idx').get() as { n: number }).n;
const EVERYDAY_FTS = { automerge: 4, crisismerge: 16, hashsize: 1024 * 1024 };
/** What FTS5 runs with: a setting never written is its default. */
const ftsSettings = () => ({
  ...EVERYDAY_FTS,
  ...Object.fromEntries(
    (
      service.store.db
        .prepare("SELECT k, v FROM events_fts_config WHERE k IN ('automerge', 'crisismerge', 'hashsize')")
        .all() as { k: string; v: number }[]
    ).map((r) => [r.k, r.v]),
  ),
});
const found = (search: string) =>
  service.query({ filters: { search }, sort: { field: 'date', dir: 'asc' }, limit: 500 }).rows.map((r) => r.eventId);

describe('import: bulk loads', () => {
  it('indexes and full-text settings of a bulk load are put back when the file is next opened after a crash', async () => {
    await importOne('some.ndjson', ndjson(events(0, 10)));
    const indexes = () =>
      (
        service.store.db
          .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL ORDER BY name",
          )
          .all() as { name: string }[]
      ).map((r) => r.name);
    const before = indexes();
    expect(before.length).toBeGreaterThanOrEqual(6);
    expect(ftsSettings()).toEqual(EVERYDAY_FTS);
    service.store.deferIndexes();
    service.store.beginBulk();
    // The load dies after 6 batches: 6 segments nobody merges while automerge is off.
    for (let b = 0; b < 6; b++) service.store.insertBatch(events(100 + b * 20, 120 + b * 20).map(rowOf), 'import');
    expect(indexes()).toEqual([]);
    expect(ftsSettings().automerge).toBe(0);
    expect(ftsSegments()).toBeGreaterThanOrEqual(6);
    const path = service.store.db.name;
    await service.close();
    service = openService(path);
    expect(indexes()).toEqual(before);
    expect(service.store.db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
    expect(ftsSettings()).toEqual(EVERYDAY_FTS);
    expect(ftsSegments()).toBe(1);
    expect(ids()).toHaveLength(130);
    // fld_0 and user1@ come together every 30th event.
    expect(found('fld_0 user1@example.test')).toEqual(['evt_0', 'evt_120', 'evt_150', 'evt_180', 'evt_210']);
  });

  it('two imports asked for at once run one after the other, each with the report it would have alone', async () => {
    const a = tmp.file(`${n}-a.ndjson`, ndjson(events(0, 2000)));
    const b = tmp.file(`${n}-b.ndjson`, ndjson(events(1500, 4000)));
    const [[ra], [rb]] = await Promise.all([
      service.import([a], { load: 'bulk', batchSize: 200 }),
      service.import([b], { load: 'bulk', batchSize: 200 }),
    ]);
    expect(ra).toMatchObject({ items: 2000, accepted: 2000, duplicates: 0, fatal: null });
    expect(rb).toMatchObject({ items: 2500, accepted: 2000, duplicates: 500, fatal: null });
    const db = service.store.db;
    expect(db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM events').get()).toEqual({
      rows: 4000,
      ids: 4000,
    });
    expect(db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
    expect(
      db
        .prepare(
          "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
        )
        .get(),
    ).toEqual({ n: EVENT_INDEXES });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it('a bulk load writes one full-text segment per batch and merges them once at the end', async () => {
    const list = events(0, 3000);
    const segmentsSeen: number[] = [];
    const [r] = await service.import([tmp.file(`${n}-bulk.ndjson`, ndjson(list.toReversed()))], {
      load: 'bulk',
      batchSize: 500,
      onProgress: () => segmentsSeen.push(ftsSegments()),
    });
    expect(r.accepted).toBe(3000);
    // Any statement that opens a savepoint mid-batch (a multi-row INSERT) would cut a batch into many.
    expect(segmentsSeen.at(-1)).toBeLessThanOrEqual(6);
    expect(ftsSegments()).toBe(1);
    expect(ftsSettings()).toEqual(EVERYDAY_FTS);
    expect(found('fld_0 user1@example.test')).toEqual(Array.from({ length: 100 }, (_, k) => `evt_${k * 30}`));
  });

  it('a bulk load builds each index set aside in this thread, at the smallest sort runs, and puts the connection back as it was', async () => {
    const db = service.store.db;
    const usual = { threads: db.pragma('threads', { simple: true }), cache: db.pragma('cache_size', { simple: true }) };
    const builds: { sql: string; threads: unknown; cache: unknown }[] = [];
    const exec = db.exec.bind(db);
    // Observed, not replaced: each CREATE INDEX runs on the real connection, its settings read first.
    const spy = vi.spyOn(db, 'exec').mockImplementation((sql: string) => {
      if (/^CREATE (UNIQUE )?INDEX/i.test(sql))
        builds.push({
          sql,
          threads: db.pragma('threads', { simple: true }),
          cache: db.pragma('cache_size', { simple: true }),
        });
      return exec(sql);
    });
    try {
      const [r] = await service.import([tmp.file(`${n}-sorts.ndjson`, ndjson(events(0, 2000)))], { load: 'bulk' });
      expect(r.accepted).toBe(2000);
    } finally {
      spy.mockRestore();
    }
    expect(builds.length).toBe(EVENT_INDEXES);
    expect(builds.every((b) => b.threads === 0 && b.cache === -4096)).toBe(true);
    expect({
      threads: db.pragma('threads', { simple: true }),
      cache: db.pragma('cache_size', { simple: true }),
    }).toEqual(usual);
  });
});

/** Runs `body` for each staged load (staged, bulk), read by a worker thread and in place, each into a cache of its own. */
async function eachStagedLoad(
  tag: string,
  body: (
    other: AuditService,
    o: { load: 'staged' | 'bulk'; worker: boolean; how: string; name: string },
  ) => Promise<void>,
): Promise<void> {
  for (const load of ['staged', 'bulk'] as const) {
    for (const worker of [true, false]) {
      const name = `cache-${n}-${tag}-${load}-${worker}.db`;
      const other = openService(join(tmp.dir, name));
      try {
        await body(other, { load, worker, how: `${load}, worker ${worker}`, name });
      } finally {
        await other.close();
      }
    }
  }
}

describe('import: interrupted (Ctrl-C)', () => {
  it('a staged or bulk load, by a worker thread or in place, stops after the batch in hand: what it reports is in the cache, indexes whole, and the files after it are not read', async () => {
    const total = 20_000;
    const file = tmp.file(`${n}-interrupted.ndjson`, ndjson(events(0, total)));
    const after = tmp.file(`${n}-after.ndjson`, ndjson(events(total, total + 10)));
    await eachStagedLoad('stop', async (other, { load, worker, how, name }) => {
      const stop = new AbortController();
      const reports = await other.import([file, after], {
        load,
        worker,
        batchSize: 500,
        signal: stop.signal,
        onProgress: () => stop.abort(),
      });
      expect(reports, how).toHaveLength(1);
      const kept = other.store.db.prepare('SELECT count(*) FROM events').pluck().get() as number;
      expect(reports[0].accepted, how).toBe(kept);
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(total);
      expect(other.store.db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get()).toBe(0);
      expect(other.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(readdirSync(tmp.dir).filter((f) => f.startsWith(`${name}-stage-`))).toEqual([]);

      const [again] = await other.import([file], { load, worker, batchSize: 500 });
      expect(again).toMatchObject({ accepted: total - kept, duplicates: kept });
    });
  }, 120_000);

  it('a staged or bulk load of a file out of date order, stopped while rows are held back to go in by date: the report counts exactly what the cache holds and what it read but did not add, and a re-run adds exactly the rest', async () => {
    const total = 12_000;
    // From its second batch on, every batch lands among dates already written, so the load holds it back.
    const file = tmp.file(`${n}-shuffled.ndjson`, ndjson(shuffle(events(0, total), 7)));
    await eachStagedLoad('shuffled', async (other, { load, worker, how }) => {
      const stop = new AbortController();
      // Stopped halfway through the reading: by then most of what was read is held back.
      const [r] = await other.import([file], {
        load,
        worker,
        batchSize: 500,
        signal: stop.signal,
        onProgress: (p) => p.items >= total / 2 && stop.abort(),
      });
      const kept = other.store.db.prepare('SELECT count(*) FROM events').pluck().get() as number;
      expect(r.accepted, how).toBe(kept);
      expect(r.items, how).toBeGreaterThanOrEqual(total / 2);
      // Every item read is accounted for: added, already cached, rejected, or read but not added (held back when it stopped).
      expect(r.items - r.accepted - r.duplicates - r.rejected, how).toBe(r.notAdded ?? 0);
      expect(r.notAdded, how).toBeGreaterThan(0);
      expect(other.store.db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get(), how).toBe(0);
      expect(other.store.db.pragma('integrity_check', { simple: true }), how).toBe('ok');

      const [again] = await other.import([file], { load, worker, batchSize: 500 });
      expect(again, how).toMatchObject({ items: total, accepted: total - kept, duplicates: kept, rejected: 0 });
      expect(other.store.db.prepare('SELECT count(*) FROM events').pluck().get(), how).toBe(total);
    });
  }, 180_000);
});

describe('import: malformed rows are reported one by one, good rows are kept', () => {
  it('a staged or bulk load, by a worker thread or in place, gives the report and rows of a plain import, malformed rows included', async () => {
    const lines = [
      ...events(0, 700).map((e) => JSON.stringify(e)),
      '{"event_id": "broken", ',
      JSON.stringify(makeEvent(9000, { date: 'yesterday' })),
      JSON.stringify({ data: events(700, 705), meta: {} }),
      JSON.stringify(makeEvent(3)),
      JSON.stringify(makeEvent(9001, { member: { user_id: 'x' }, category: 'é ✓ 𝄞' })),
    ];
    const file = tmp.file(`${n}-worker.ndjson`, lines.join('\n') + '\n' + JSON.stringify(makeEvent(9002)).slice(0, 30));
    const all = (s: AuditService) =>
      s.store.db
        .prepare(
          'SELECT seq, event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, (SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw FROM events ORDER BY seq',
        )
        .all();
    const text = (s: AuditService) =>
      s.store.db.prepare("SELECT rowid FROM events_fts WHERE events_fts MATCH 'admin' ORDER BY rowid").all();
    const [plain] = await service.import([file], { batchSize: 64 });
    expect(plain).toMatchObject({ items: 709, accepted: 705, duplicates: 1, rejected: 3 });
    expect(plain.fatal).toMatch(/truncated/);
    for (const load of ['staged', 'bulk'] as const) {
      for (const worker of [true, false]) {
        const other = openService(join(tmp.dir, `cache-${n}-${load}-${worker}.db`));
        try {
          const [staged] = await other.import([file], { batchSize: 64, load, worker });
          expect(staged).toEqual(plain);
          expect(all(other)).toEqual(all(service));
          expect(text(other)).toEqual(text(service));
          expect(readdirSync(tmp.dir).filter((f) => f.startsWith(`cache-${n}-${load}-${worker}.db-stage-`))).toEqual(
            [],
          );
        } finally {
          await other.close();
        }
      }
    }
  });

  it('NDJSON: bad JSON, wrong types and missing fields, with line numbers', async () => {
    const lines = [
      JSON.stringify(makeEvent(0)),
      '{"event_id": "broken", ',
      JSON.stringify(makeEvent(1, { date: 'yesterday' })),
      '',
      JSON.stringify({ ...makeEvent(2), action: 'x' }),
      '42',
      JSON.stringify(makeEvent(3, { member: { user_id: 'abc' } })),
      JSON.stringify(makeEvent(4)),
    ];
    const r = await importOne('bad.ndjson', lines.join('\n') + '\n');
    expect(r).toMatchObject({ items: 7, accepted: 2, rejected: 5, fatal: null });
    expect(r.rejects.map((x) => x.line)).toEqual([2, 3, 5, 6, 7]);
    expect(r.rejects[0].reason).toMatch(/not valid JSON/);
    expect(r.rejects[1].reason).toMatch(/date .* not an ISO 8601/);
    expect(r.rejects[2].reason).toMatch(/action must be an object/);
    expect(r.rejects[3].reason).toMatch(/must be a JSON object/);
    expect(r.rejects[4].reason).toMatch(/member.user_id must be an integer/);
    expect(ids()).toEqual(['evt_0', 'evt_4']);
  });

  it('JSON: non-object items and items that do not parse are rejected in place', async () => {
    const text = `[\n${JSON.stringify(makeEvent(0))},\n"text",\n{"event_id": 5, "date": "2026-03-01T00:00:00Z"},\n{"a": tru},\n${JSON.stringify(makeEvent(1))}\n]`;
    const r = await importOne('bad.json', text);
    expect(r).toMatchObject({ items: 5, accepted: 2, rejected: 3, fatal: null });
    expect(r.rejects.map((x) => [x.line, x.item])).toEqual([
      [3, 2],
      [4, 3],
      [5, 4],
    ]);
    expect(r.rejects[1].reason).toMatch(/event_id must be a string/);
  });

  it('CSV: wrong field counts and cells that are not JSON, with row and line numbers', async () => {
    const good = csvRecord(makeEvent(0));
    const text =
      CSV_COLUMNS.join(',') +
      '\n' +
      good +
      'only,three,fields\n' +
      csvRecord(makeEvent(1)).replace('{""group_id""', '{group_id') +
      csvRecord(makeEvent(2));
    const r = await importOne('bad.csv', text);
    expect(r).toMatchObject({ items: 4, accepted: 2, rejected: 2, fatal: null });
    expect(r.rejects).toEqual([
      { line: 3, item: 2, reason: `row 2 has 3 fields, the header has ${CSV_COLUMNS.length}` },
      { line: 4, item: 3, reason: 'action.data is not valid JSON' },
    ]);
  });

  it('CSV from a tool that quotes every cell: "" is an empty text, no value in a JSON or number cell, and a required id "" is missing', async () => {
    const quoteAll = (cells: readonly string[]) => cells.map((c) => `"${c.replaceAll('"', '""')}"`).join(',') + '\r\n';
    const row = (set: Record<string, string>) => quoteAll(CSV_COLUMNS.map((c) => set[c] ?? ''));
    const text =
      quoteAll(CSV_COLUMNS) +
      row({
        event_id: 'q1',
        date: '2026-03-01T10:00:00Z',
        'action.event_type': 'team.member.invited',
        'member.email': 'a@b.test',
        'action.data': '{"group_id":104}',
        'member.user_id': '7',
      }) +
      row({ date: '2026-03-01T11:00:00Z', 'action.event_type': 'team.member.invited' });
    const r = await importOne('quoted.csv', text);
    expect(r).toMatchObject({ format: 'csv', items: 2, accepted: 1, rejected: 1, fatal: null });
    expect(r.rejects).toEqual([{ line: 3, item: 2, reason: 'event_id is missing' }]);
    const d = service.event('q1')!;
    // Every empty text cell is "" (what the file says), the JSON and number cells that are "" are left out.
    expect(d.event).toEqual({
      event_id: 'q1',
      date: '2026-03-01T10:00:00Z',
      category: '',
      action: {
        event_type: 'team.member.invited',
        verb: '',
        status: '',
        resource_id: '',
        request_id: '',
        correlation_id: '',
        project_name: '',
        folder_name: '',
        data: { group_id: 104 },
      },
      member: { type: '', user_id: 7, email: 'a@b.test' },
      source: { project: '', platform: '', referer: '' },
    });
    // The cache's columns take "" as no value, as for an empty unquoted cell.
    expect(d.row).toMatchObject({
      memberId: 7,
      memberType: null,
      verb: null,
      status: null,
      category: null,
      groupId: 104,
      projectRef: null,
      requestId: null,
      correlationId: null,
    });
  });

  it('CSV: a quoted empty cell split across read chunks is still an empty text', () => {
    const text = `event_id,date,action.event_type,category,action.project_name\r\nc1,2026-03-01T10:00:00Z,t.x.y,"",\r\nc2,2026-03-01T10:00:00Z,t.x.y,,""`;
    const parse = (chunks: string[]) => {
      const out: Parsed[] = [];
      const p = new CsvParser();
      for (const c of chunks) p.feed(c, (x) => out.push(x));
      p.end((x) => out.push(x));
      return out;
    };
    const whole = parse([text]);
    expect(whole.map((x) => (x.kind === 'item' ? x.value : x))).toEqual([
      { event_id: 'c1', date: '2026-03-01T10:00:00Z', action: { event_type: 't.x.y' }, category: '' },
      { event_id: 'c2', date: '2026-03-01T10:00:00Z', action: { event_type: 't.x.y', project_name: '' } },
    ]);
    expect(parse([...text])).toEqual(whole);
  });

  it('CSV: a header without the required columns stops the file before any row', async () => {
    const r = await importOne('nohead.csv', 'id,when\n1,2\n');
    expect(r.fatal).toMatch(/lacks event_id, date, action.event_type/);
    expect(r.accepted).toBe(0);
  });
});

describe('import: truncated files keep every complete row before the cut', () => {
  it('NDJSON cut mid-line', async () => {
    const text = ndjson(events(0, 5)) + JSON.stringify(makeEvent(5)).slice(0, 40);
    const r = await importOne('cut.ndjson', text);
    expect(r).toMatchObject({ accepted: 5, rejected: 0 });
    expect(r.fatal).toMatch(/line 6 is incomplete.*truncated/);
    expect(ids()).toHaveLength(5);
  });

  it('JSON array and API page cut mid-item', async () => {
    const arr = JSON.stringify(events(0, 5));
    const r = await importOne('cut.json', arr.slice(0, arr.length - 30));
    expect(r.accepted).toBe(4);
    expect(r.fatal).toMatch(/inside item 5 .*truncated/);
    const page = JSON.stringify({ data: events(10, 13), meta: {} });
    const r2 = await importOne('cut-page.json', page.slice(0, page.indexOf('"evt_12"')));
    expect(r2.accepted).toBe(2);
    expect(r2.fatal).toMatch(/truncated/);
  });

  it('CSV cut inside a quoted field and cut mid-row', async () => {
    const body = csv(events(0, 3));
    const r = await importOne('cut.csv', body + csvRecord(makeEvent(3)).slice(0, 120));
    expect(r.accepted).toBe(3);
    expect(r.fatal).toMatch(/quoted field.*truncated/);
    const r2 = await importOne('cut2.csv', body + 'evt_9,2026-03-01T00:00:00Z,team');
    expect(r2.fatal).toMatch(/ends mid-row/);
  });
});

describe('import: hostile input', () => {
  it('a broken bracket structure stops the file with the line, keeping what came before', async () => {
    const r = await importOne(
      'broken.json',
      `[${JSON.stringify(makeEvent(0))},\n{"a": [1, 2}],\n${JSON.stringify(makeEvent(1))}]`,
    );
    expect(r.accepted).toBe(1);
    expect(r.fatal).toMatch(/line 2: "\[" closed by "\}"/);
  });

  it('binary files, empty files and files that are not there get one clear error', async () => {
    expect((await importOne('bin.json', Buffer.from([0x7b, 0, 1, 2, 0xff]))).fatal).toMatch(/not a text file/);
    expect((await importOne('empty.json', '')).warnings).toEqual(['the file is empty (no events): nothing to import']);
    const [missing] = await service.import([join(tmp.dir, 'nope.ndjson')]);
    expect(missing.fatal).toMatch(/no such file/);
  });

  it('deep nesting, huge lines and prototype keys neither crash nor pollute', async () => {
    const deep = JSON.stringify(makeEvent(0)).replace(
      '"context":{',
      `"context":{"deep":${'{"x":'.repeat(5000)}1${'}'.repeat(5000)},`,
    );
    const huge = JSON.stringify(makeEvent(1, { category: 'x'.repeat(5 * 1024 * 1024) }));
    const proto = '{"__proto__": {"polluted": true}, ' + JSON.stringify(makeEvent(2)).slice(1);
    const r = await importOne('hostile.ndjson', [deep, huge, proto, JSON.stringify(makeEvent(3))].join('\n') + '\n');
    expect(r).toMatchObject({ accepted: 2, rejected: 2 });
    expect(r.rejects[0]).toMatchObject({ line: 1, reason: expect.stringMatching(/nested deeper than/) });
    expect(r.rejects[1]).toMatchObject({ line: 2, reason: expect.stringMatching(/longer than/) });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const csvProto = await importOne(
      'proto.csv',
      'event_id,date,event_type,__proto__.polluted,data.constructor\nz1,2026-03-01T00:00:00Z,t.x.y,1,2\n',
    );
    expect(csvProto.accepted).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an event with a field outside the payload 5,000 levels deep (one 10 KB NDJSON line) is refused by its line; the rest is imported and the cache is otherwise untouched', async () => {
    await importOne('before.ndjson', ndjson(events(0, 10)));
    const before = cacheSnapshot(service);
    const line = deepEventLine(11);
    expect(line.length).toBeLessThan(12 * 1024);
    const r = await importOne(
      'deep-extra.ndjson',
      [JSON.stringify(makeEvent(10)), line, JSON.stringify(makeEvent(12))].join('\n') + '\n',
    );
    expect(r).toMatchObject({ items: 3, accepted: 2, rejected: 1, fatal: null });
    expect(r.rejects).toEqual([
      { line: 2, item: 2, reason: `the event is nested deeper than ${MAX_EVENT_DEPTH} levels` },
    ]);
    expect(service.event('evt_11')).toBeNull();
    expect(ids()).toEqual([...events(0, 11), makeEvent(12)].map((e) => e.event_id).sort());
    // The events cached before, byte for byte.
    expect(cacheSnapshot(service).slice(0, 10)).toEqual(before);
  });

  it('every field counts: nesting just within the limit is kept, one level more refused, in JSON and CSV too', async () => {
    // makeEvent(i).extra: the event is level 1, so `levels` brackets reach level 1 + levels.
    const within = deepEventLine(20, MAX_EVENT_DEPTH - 1);
    const beyond = deepEventLine(21, MAX_EVENT_DEPTH);
    expect(await importOne('edge.ndjson', `${within}\n${beyond}\n`)).toMatchObject({
      accepted: 1,
      rejected: 1,
      rejects: [{ line: 2, item: 2 }],
    });
    const json = await importOne('deep.json', `[\n${JSON.stringify(makeEvent(22))},\n${deepEventLine(23)}\n]`);
    expect(json).toMatchObject({
      format: 'json',
      accepted: 1,
      rejected: 1,
      rejects: [{ line: 3, item: 2, reason: `the event is nested deeper than ${MAX_EVENT_DEPTH} levels` }],
    });
    // CSV nests only in its JSON cells; the whole event's limit is checked before the payload's own.
    const deepCell = { client: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) };
    const c = await importOne(
      'deep.csv',
      csv([makeEvent(24), makeEvent(25, { action: { ...(makeEvent(25).action as object), context: deepCell } })]),
    );
    expect(c).toMatchObject({
      format: 'csv',
      accepted: 1,
      rejected: 1,
      rejects: [{ line: 3, item: 2, reason: `the event is nested deeper than ${MAX_EVENT_DEPTH} levels` }],
    });
    expect(ids()).toEqual(['evt_20', 'evt_22', 'evt_24']);
  });

  it('an event larger than the limit is refused by its row in every format, however it is spread', async () => {
    const big = (i: number) => makeEvent(i, { category: 'x'.repeat(MAX_EVENT_BYTES) });
    // Multi-byte text counts by its bytes as stored: a third of the limit in characters of 3 bytes each, and some.
    const wide = makeEvent(32, { category: '€'.repeat(Math.ceil(MAX_EVENT_BYTES / 3) + 100) });
    const reason = expect.stringMatching(
      new RegExp(`^the event is \\d+\\.\\d KB, more than the ${MAX_EVENT_BYTES / 1024} KB an event may hold$`),
    );
    const nd = await importOne('big.ndjson', ndjson([makeEvent(30), big(31), wide, makeEvent(33)]));
    expect(nd).toMatchObject({
      accepted: 2,
      rejected: 2,
      rejects: [
        { line: 2, item: 2, reason },
        { line: 3, item: 3, reason },
      ],
    });
    const js = await importOne('big.json', JSON.stringify({ data: [big(34), makeEvent(35)], meta: {} }));
    expect(js).toMatchObject({ accepted: 1, rejected: 1, rejects: [{ item: 1, reason }] });
    const cs = await importOne('big.csv', csv([big(36), makeEvent(37)]));
    expect(cs).toMatchObject({ accepted: 1, rejected: 1, rejects: [{ line: 2, item: 1, reason }] });
    expect(ids()).toEqual(['evt_30', 'evt_33', 'evt_35', 'evt_37']);
  });

  it('search text with FTS syntax is matched literally', async () => {
    await importOne('fts.ndjson', ndjson(events(0, 20)));
    for (const s of ['"', 'AND', 'role OR', 'NEAR(a b)', '*', 'col:umn', '(', "'; DROP TABLE events; --"]) {
      expect(() =>
        service.query({ filters: { search: s }, sort: { field: 'date', dir: 'desc' }, limit: 5 }),
      ).not.toThrow();
    }
    expect(ids()).toHaveLength(20);
  });
});

describe('import: a full disk', () => {
  it('a file the disk beside the cache could not hold is refused before anything is written', async () => {
    await importOne('before.ndjson', ndjson(events(0, 10)));
    // A real file whose size is far beyond any disk: its first events, then a hole (sparse, so it takes no space).
    const path = tmp.file(`${n}-huge.ndjson`, ndjson(events(10, 210)));
    truncateSync(path, 2 ** 42);
    const [r] = await service.import([path]);
    expect(r.fatal).toMatch(
      /^not enough free disk space beside the audit cache \(.+\): importing this 4398\.0 GB file takes about \d+\.\d GB \(.+\), and .+ is free\. Nothing was imported/,
    );
    expect(r).toMatchObject({ items: 0, accepted: 0, rejected: 0 });
    expect(ids()).toEqual(
      events(0, 10)
        .map((e) => e.event_id)
        .sort(),
    );
    expect(readdirSync(tmp.dir).filter((f) => f.includes('-stage-'))).toEqual([]);
    expect(service.store.db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
  });

  it.for([{ load: 'rows' as const }, { load: 'staged' as const }, { load: 'bulk' as const }])(
    'the disk filling up during an import ($load) stops it with a clear error; what came before stays, and importing the file again completes it',
    async ({ load }, ctx) => {
      const dir = smallDisk(ctx);
      const cache = openService(join(dir, 'audit.db'));
      const file = tmp.file(`full-${load}.ndjson`, ndjson(events(100, 3100)));
      let filler: string | null = null;
      try {
        await cache.import([tmp.file(`full-first-${load}.ndjson`, ndjson(events(0, 100)))]);
        // Another program takes the last free byte once the first batch is in.
        const [r] = await cache.import([file], { load, batchSize: 200, onProgress: () => (filler ??= fillDisk(dir)) });
        expect(r.fatal).toMatch(
          /^the disk holding the audit cache filled up \(.+\), so the import stopped\. The \d+ event\(s\) imported before it stay cached.*Free some space and import the file again: events already cached are skipped\.$/,
        );
        expect(r.accepted).toBeGreaterThanOrEqual(200);
        expect(r.accepted).toBeLessThan(3000);
        expect(cache.store.counts().events).toBe(100 + r.accepted);
        expect(cache.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(readdirSync(dir).filter((f) => f.includes('-stage-'))).toEqual([]);

        rmSync(filler!);
        const [again] = await cache.import([file]);
        expect(again).toMatchObject({
          items: 3000,
          accepted: 3000 - r.accepted,
          duplicates: r.accepted,
          rejected: 0,
          fatal: null,
        });
        const db = cache.store.db;
        expect(db.prepare('SELECT count(*) AS rows, count(DISTINCT event_id) AS ids FROM events').get()).toEqual({
          rows: 3100,
          ids: 3100,
        });
        expect(db.prepare('SELECT count(*) AS n FROM deferred_indexes').get()).toEqual({ n: 0 });
        expect(
          db
            .prepare(
              "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL",
            )
            .get(),
        ).toEqual({ n: EVENT_INDEXES });
        expect(
          cache.query({ filters: { search: 'denied' }, sort: { field: 'date', dir: 'desc' }, limit: 5 }).rows.length,
        ).toBeGreaterThan(0);
      } finally {
        await cache.close();
      }
    },
  );
});
