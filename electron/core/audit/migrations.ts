import type { Db, Migration } from '../db/open.ts';
import { checkEvent } from './event.ts';
import { KeyAllocator } from './keys.ts';
import { FILL_SEARCH_NAMES_SQL, SEARCH_NAMES_SQL } from './search.ts';

/**
 * audit.db. Each filter index ends in the rowid seq, which follows ts (migration 10), so "filter +
 * newest first + LIMIT" walks one index without sorting; sort-key columns are NOT NULL ('' for none) for keyset cursors. seq (the FTS rowid) follows
 * ts (keys.ts), and the event as received lives in events_raw, keeping events narrow (~200 B a row).
 */
export const AUDIT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events, fts, sync state, request ledger',
    up: (db) => {
      db.exec(`
        CREATE TABLE events (
          seq INTEGER PRIMARY KEY,
          event_id TEXT NOT NULL UNIQUE,
          ts INTEGER NOT NULL,
          event_type TEXT NOT NULL,
          member_email TEXT NOT NULL DEFAULT '',
          member_id INTEGER,
          member_type TEXT,
          verb TEXT,
          status TEXT,
          category TEXT,
          group_id INTEGER,
          folder_ref TEXT,
          project_ref TEXT,
          request_id TEXT,
          correlation_id TEXT,
          resource_id TEXT,
          origin TEXT NOT NULL CHECK (origin IN ('sync', 'import')),
          raw TEXT NOT NULL
        );
        CREATE INDEX events_ts ON events (ts);
        CREATE INDEX events_type_ts ON events (event_type, ts);
        CREATE INDEX events_member_ts ON events (member_id, ts);
        CREATE INDEX events_email_ts ON events (member_email, ts);
        CREATE INDEX events_group_ts ON events (group_id, ts);
        CREATE INDEX events_folder_ts ON events (folder_ref, ts);
        CREATE INDEX events_request ON events (request_id) WHERE request_id IS NOT NULL;
        CREATE INDEX events_correlation ON events (correlation_id) WHERE correlation_id IS NOT NULL;

        -- Contentless: the text is derived from raw, so storing it twice would double the file.
        -- contentless_delete keeps a future retention prune possible. '@._-' are token characters
        -- so e-mails, references and event types are one token each: searching one is a single
        -- doclist lookup, not a phrase over words present in every event (bench: 200 ms -> 5 ms).
        CREATE VIRTUAL TABLE events_fts USING fts5 (body, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 2 tokenchars '@._-'");

        -- One row per API key fingerprint (never the key): the walk in progress and what is complete.
        CREATE TABLE sync_state (
          fingerprint TEXT PRIMARY KEY,
          walk_windows TEXT,          -- JSON [{from,to}] still to walk, first is current
          walk_cursor TEXT,           -- next_cursor reached in the current window
          walk_started_at INTEGER,
          complete_through INTEGER,   -- ts up to which every event is known to be cached
          last_sync_at INTEGER,
          last_success_at INTEGER,
          last_error_kind TEXT,
          last_error_message TEXT,
          last_error_at INTEGER,
          retry_after_until INTEGER
        );

        -- Requests sent per key and UTC day, counted before sending so a crash never under-counts.
        CREATE TABLE request_ledger (
          fingerprint TEXT NOT NULL,
          day TEXT NOT NULL,
          requests INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (fingerprint, day)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 2,
    name: 'indexes set aside during a bulk import',
    up: (db) => {
      // A bulk import drops the secondary indexes and builds them again at the end (a sort instead
      // of a million random inserts). Their definitions wait here, so a crash mid-import is
      // repaired when the file is next opened.
      db.exec('CREATE TABLE deferred_indexes (name TEXT PRIMARY KEY, sql TEXT NOT NULL)');
    },
  },
  {
    version: 3,
    name: 'row keys follow the event date',
    up: (db) => rekeyByDate(db),
  },
  {
    version: 4,
    name: 'the event as received moves to events_raw',
    up: (db) => {
      // Appended in seq order; DROP COLUMN then rewrites events without raw, keeping its indexes.
      // In the migration's transaction: a crash leaves the file as it was.
      db.exec(`
        CREATE TABLE events_raw (seq INTEGER PRIMARY KEY, raw TEXT NOT NULL);
        INSERT INTO events_raw (seq, raw) SELECT seq, raw FROM events ORDER BY seq;
        ALTER TABLE events DROP COLUMN raw;
      `);
    },
  },
  {
    version: 5,
    name: 'full-text index without positions',
    up: (db) => {
      // Searches are ANDed words, never phrases, so positions are never read: detail=column indexes
      // faster and smaller; detail=none made prefix queries 7-8x slower (bench/history/audit-import.md, fourth round). Contentless:
      // the text is derived again from each stored event, in seq order so it is appended to.
      db.exec(
        `CREATE VIRTUAL TABLE events_fts_new USING fts5 (body, content = '', contentless_delete = 1, detail = column, tokenize = "unicode61 remove_diacritics 2 tokenchars '@._-'")`,
      );
      const page = db.prepare('SELECT seq, raw FROM events_raw WHERE seq > ? ORDER BY seq LIMIT 2000');
      const text = db.prepare('INSERT INTO events_fts_new (rowid, body) VALUES (?, ?)');
      let after = -Number.MAX_VALUE;
      for (;;) {
        const rows = page.all(after) as { seq: number; raw: string }[];
        if (!rows.length) break;
        for (const r of rows) text.run(r.seq, searchText(r.raw));
        after = rows[rows.length - 1].seq;
      }
      db.exec('DROP TABLE events_fts; ALTER TABLE events_fts_new RENAME TO events_fts;');
    },
  },
  {
    version: 6,
    name: 'event_id uniqueness as an index of its own',
    up: (db) => {
      // A UNIQUE constraint's index cannot be dropped, and with random ids it was a bulk load's largest
      // cost: as a named index it is set aside and built at the end, where bulk_rows tells the
      // duplicates the load let in from the rows cached before (store/bulk-indexes.ts).
      const table = db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'")
        .pluck()
        .get() as string;
      const plain = table
        .replace(/^CREATE TABLE "?events"?/, 'CREATE TABLE events_new')
        .replace(/\bevent_id TEXT NOT NULL UNIQUE\b/, 'event_id TEXT NOT NULL');
      if (!plain.startsWith('CREATE TABLE events_new') || /\bUNIQUE\b/.test(plain))
        throw new Error(`audit migration 6: unexpected events table: ${table}`);
      const indexes = db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
        .pluck()
        .all() as string[];
      db.exec(plain);
      db.exec('INSERT INTO events_new SELECT * FROM events ORDER BY seq');
      db.exec('DROP TABLE events; ALTER TABLE events_new RENAME TO events;');
      for (const sql of indexes) db.exec(sql);
      db.exec(`
        CREATE UNIQUE INDEX events_event_id ON events (event_id);
        CREATE TABLE bulk_rows (seq INTEGER PRIMARY KEY, owner INTEGER NOT NULL);
      `);
    },
  },
  {
    version: 7,
    name: 'actors without a user id by e-mail',
    up: (db) => {
      // The member facet counts actors without a user id per e-mail, and filters.noUserIdEmails
      // picks some: both walk this index in (e-mail, date) order. Partial, so it holds only those
      // actors' events (API keys, the system) and costs an import next to nothing for the rest.
      const sql = 'CREATE INDEX events_noid_email_ts ON events (member_id, member_email, ts) WHERE member_id IS NULL';
      // A bulk load set the other indexes aside (a crash, or another process loading now): this one
      // waits with them, to be built once at its end (store.ts restoreIndexes).
      const loading = db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get() as number;
      if (loading)
        db.prepare('INSERT OR REPLACE INTO deferred_indexes (name, sql) VALUES (?, ?)').run(
          'events_noid_email_ts',
          sql,
        );
      else db.exec(sql);
    },
  },
  {
    version: 8,
    name: 'names searched by a part of them',
    // search.ts: the distinct event types, e-mails and project and folder names of the cached events.
    up: (db) => db.exec(SEARCH_NAMES_SQL + FILL_SEARCH_NAMES_SQL),
  },
  {
    version: 9,
    name: 'forwarding to SIEM sinks',
    // forward/watermarks.ts: each sink's watermark in the archive's order (ts, event_id), updated
    // only after the sink acknowledged a batch. An event cached later behind a watermark (an import
    // of older events) is listed for that sink by a trigger watermarks.ts keeps while a sink exists.
    up: (db) =>
      db.exec(`
        CREATE TABLE forward_sinks (
          sink_id TEXT PRIMARY KEY,
          wm_ts INTEGER,
          wm_event_id TEXT,
          delivered INTEGER NOT NULL DEFAULT 0,
          attempts INTEGER NOT NULL DEFAULT 0,
          failing_since INTEGER,
          last_error TEXT,
          last_success_at INTEGER
        );
        CREATE TABLE forward_behind (sink_id TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (sink_id, seq)) WITHOUT ROWID;
        CREATE TABLE forward_dead (
          sink_id TEXT NOT NULL,
          event_id TEXT NOT NULL,
          ts INTEGER NOT NULL,
          reason TEXT NOT NULL,
          at INTEGER NOT NULL,
          PRIMARY KEY (sink_id, event_id)
        ) WITHOUT ROWID;
      `),
  },
  {
    version: 10,
    name: 'filter indexes without the date: the row key follows it',
    up: (db) => dropDateFromIndexes(db),
  },
  {
    version: 11,
    name: 'one process forwards a sink at a time',
    // forward/lease.ts: who forwards each sink now (machine, pid), until when unless renewed.
    up: (db) =>
      db.exec(`
        CREATE TABLE forward_leases (
          sink_id TEXT PRIMARY KEY,
          host TEXT NOT NULL,
          pid INTEGER NOT NULL,
          token TEXT NOT NULL,
          expires_at INTEGER NOT NULL
        );
      `),
  },
];

/**
 * Migration 10: each filter index that ended in ts, by what replaces it. events_ts stays: the SIEM
 * forwarder reads the archive in (ts, event_id) order by it (forward/read.ts), spilled keys or not.
 */
const DATED_INDEXES: Record<string, string | null> = {
  events_type_ts: 'CREATE INDEX events_type ON events (event_type)',
  events_member_ts: 'CREATE INDEX events_member ON events (member_id)',
  events_email_ts: 'CREATE INDEX events_email ON events (member_email)',
  events_group_ts: 'CREATE INDEX events_group ON events (group_id)',
  events_folder_ts: 'CREATE INDEX events_folder ON events (folder_ref)',
  // member_id (always NULL here) keeps the index covering for `member_id IS NULL AND member_email = ?`.
  events_noid_email_ts: 'CREATE INDEX events_noid_email ON events (member_id, member_email) WHERE member_id IS NULL',
};

/**
 * seq is ts * 1024 + n (keys.ts) and every index ends in the rowid, so (x) is already in (x, date)
 * order and a date range is a range of row keys: the ts columns repeated the key, and building
 * them was most of a bulk import's index work. A cache whose keys spilled sorts by (ts, seq) instead.
 */
function dropDateFromIndexes(db: Db): void {
  // A bulk load set the indexes aside (a crash, or another process loading now): the new ones wait with them.
  const loading = (db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get() as number) > 0;
  const defer = db.prepare('INSERT OR REPLACE INTO deferred_indexes (name, sql) VALUES (?, ?)');
  for (const [old, sql] of Object.entries(DATED_INDEXES)) {
    db.exec(`DROP INDEX IF EXISTS ${old}`);
    db.prepare('DELETE FROM deferred_indexes WHERE name = ?').run(old);
    if (!sql) continue;
    if (loading) defer.run(/^CREATE INDEX (\w+)/.exec(sql)![1], sql);
    else db.exec(sql);
  }
}

const EVENT_COLUMNS =
  'event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin, raw';

/**
 * seq becomes ts * 1024 + n (keys.ts), so the FTS index (rowid = seq) lists matches in date order.
 * The FTS index is contentless, so its text is derived again from each stored event. Runs in the
 * migration's transaction: a crash leaves the file as it was.
 */
function rekeyByDate(db: Db): void {
  db.exec(`
    CREATE TABLE audit_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS events_ts ON events (ts);
    CREATE TABLE events_new (
      seq INTEGER PRIMARY KEY,
      event_id TEXT NOT NULL UNIQUE,
      ts INTEGER NOT NULL,
      event_type TEXT NOT NULL,
      member_email TEXT NOT NULL DEFAULT '',
      member_id INTEGER,
      member_type TEXT,
      verb TEXT,
      status TEXT,
      category TEXT,
      group_id INTEGER,
      folder_ref TEXT,
      project_ref TEXT,
      request_id TEXT,
      correlation_id TEXT,
      resource_id TEXT,
      origin TEXT NOT NULL CHECK (origin IN ('sync', 'import')),
      raw TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE events_fts_new USING fts5 (body, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 2 tokenchars '@._-'");
  `);
  const keys = new KeyAllocator(db, 'events_new');
  const page = db.prepare(
    `SELECT seq, ${EVENT_COLUMNS} FROM events WHERE (ts, seq) > (?, ?) ORDER BY ts, seq LIMIT 2000`,
  );
  const put = db.prepare(
    `INSERT INTO events_new (seq, ${EVENT_COLUMNS}) VALUES (@key, ${EVENT_COLUMNS.split(', ')
      .map((c) => `@${c}`)
      .join(', ')})`,
  );
  const text = db.prepare('INSERT INTO events_fts_new (rowid, body) VALUES (?, ?)');
  let after: [number, number] = [-Number.MAX_VALUE, -Number.MAX_SAFE_INTEGER];
  for (;;) {
    const rows = page.all(...after) as (Record<string, unknown> & { seq: number; ts: number; raw: string })[];
    if (!rows.length) break;
    for (const r of rows) {
      const key = keys.next(r.ts);
      const { seq: _old, ...cols } = r;
      put.run({ ...cols, key });
      const checked = checkEvent(JSON.parse(r.raw), r.raw);
      text.run(key, checked.ok ? checked.row.text : '');
    }
    const last = rows[rows.length - 1];
    after = [last.ts, last.seq];
  }
  db.exec(`
    DROP TABLE events;
    DROP TABLE events_fts;
    ALTER TABLE events_new RENAME TO events;
    ALTER TABLE events_fts_new RENAME TO events_fts;
    CREATE INDEX events_ts ON events (ts);
    CREATE INDEX events_type_ts ON events (event_type, ts);
    CREATE INDEX events_member_ts ON events (member_id, ts);
    CREATE INDEX events_email_ts ON events (member_email, ts);
    CREATE INDEX events_group_ts ON events (group_id, ts);
    CREATE INDEX events_folder_ts ON events (folder_ref, ts);
    CREATE INDEX events_request ON events (request_id) WHERE request_id IS NOT NULL;
    CREATE INDEX events_correlation ON events (correlation_id) WHERE correlation_id IS NOT NULL;
    DELETE FROM deferred_indexes;
  `);
}

/** What the full-text index holds for a stored event; a row that no longer reads is left unsearchable rather than failing the upgrade of the whole cache. */
function searchText(raw: string): string {
  try {
    const checked = checkEvent(JSON.parse(raw), raw);
    return checked.ok ? checked.row.text : '';
  } catch {
    return '';
  }
}
