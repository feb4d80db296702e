import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AUDIT_SEARCH_EXAMPLES } from '../../shared/contract/audit.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { AUDIT_MIGRATIONS } from '../../electron/core/audit/migrations.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import { AuditStore as SandboxAudit, publicEvent } from '../../electron/sandbox/audit-store.ts';
import { buildTeam } from '../../electron/sandbox/team.ts';
import { openService, rowOf, tempDir, walkPages } from './helpers.ts';

/**
 * Search as a person types it, over the Sandbox's own generated events: a part of an event type,
 * of an e-mail (a surname), of a folder name, and the search box's examples.
 */
const tmp = tempDir();
const team = buildTeam(7);
const events = new SandboxAudit(team, 7, Date.UTC(2026, 10, 27)).events.map(publicEvent) as unknown as Ev[];
let service: AuditService;

interface Ev {
  event_id: string;
  action: { event_type: string; project_name: string | null; folder_name: string | null } & Record<string, unknown>;
  member: { email: string | null };
}

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
/** The rule as a person reads it: a word is inside a name (event type, e-mail, project, folder), or a word of the event (its start, with `*`). */
function matches(e: Ev, word: string): boolean {
  const row = rowOf(e);
  const w = fold(word.replace(/\*$/, ''));
  if (w.length >= 3 && row.names.some((n) => fold(n).includes(w))) return true;
  const tokens = fold(row.text).split(/[^\p{L}\p{N}@._-]+/u);
  return tokens.some((t) => (word.endsWith('*') ? t.startsWith(w) : t === w));
}
const expected = (search: string) =>
  new Set(events.filter((e) => search.split(/\s+/).every((w) => matches(e, w))).map((e) => e.event_id));
const found = (search: string) =>
  new Set(walkPages(service, { search }, { field: 'date', dir: 'desc' }, 500) as string[]);

beforeAll(async () => {
  service = openService(join(tmp.dir, 'audit.db'));
  const [r] = await service.import([tmp.file('sandbox.ndjson', events.map((e) => JSON.stringify(e)).join('\n'))]);
  expect(r.accepted).toBe(events.length);
});
afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe('audit search: parts of names, e-mails and event types', () => {
  const surname = team.members[10].name.split(' ')[1];

  it.each([
    ...AUDIT_SEARCH_EXAMPLES,
    'folder',
    'role_changed',
    surname,
    surname.toLowerCase().slice(1, 5),
    'sandbox.te',
    'hero shots',
  ])('%s finds the events holding it, and only those', (search) => {
    const want = expected(search);
    expect(want.size, `the Sandbox's events hold ${search}`).toBeGreaterThan(0);
    expect(found(search)).toEqual(want);
  });

  it('a surname finds that member’s events by their e-mail; a short word matches whole words only', () => {
    const member = team.members[10];
    const mine = events.filter((e) => e.member.email === member.email).map((e) => e.event_id);
    expect(mine.length).toBeGreaterThan(0);
    for (const id of mine) expect(found(member.name.split(' ')[1]).has(id)).toBe(true);
    // "en" is the locale of half the events: as a whole word, not inside "sent" or "pending".
    expect(found('en')).toEqual(expected('en'));
    expect(found('zzqx')).toEqual(new Set());
  });

  it('counts, facets and the timeline read the same matches as the table', () => {
    const want = expected('folder');
    expect(
      service.query({ filters: { search: 'folder' }, sort: { field: 'date', dir: 'desc' }, limit: 1, withTotal: true })
        .total,
    ).toBe(want.size);
    expect(service.timeline({ search: 'folder' }, 'day').points.reduce((n, p) => n + p.count, 0)).toBe(want.size);
    expect(service.facets({ search: 'role_changed' }, 50).eventTypes.map((t) => t.value)).toEqual([
      'team.member.role_changed',
    ]);
  });
});

describe('audit search names on every load path', () => {
  it('a staged and a bulk import, in a worker or not, keep the names a plain import keeps, and find the same events', async () => {
    const file = tmp.file('paths.ndjson', events.map((e) => JSON.stringify(e)).join('\n'));
    const names = (s: AuditService) =>
      s.store.db.prepare('SELECT value FROM search_names ORDER BY value').pluck().all();
    const want = names(service);
    expect(want.length).toBeGreaterThan(50);
    for (const [load, worker] of [
      ['staged', true],
      ['bulk', true],
      ['bulk', false],
    ] as const) {
      const other = openService(join(tmp.dir, `${load}-${worker}.db`));
      try {
        const [r] = await other.import([file], { load, worker, batchSize: 700 });
        expect(r.accepted).toBe(events.length);
        expect(names(other), `${load}, worker ${worker}`).toEqual(want);
        expect(new Set(walkPages(other, { search: 'role_chan' }, { field: 'date', dir: 'desc' }, 500))).toEqual(
          expected('role_chan'),
        );
      } finally {
        await other.close();
      }
    }
  });
});

describe('audit migration 8: a cache made before it', () => {
  it('gets its names from the events it holds, which stay as they were and become searchable by a part', async () => {
    const path = join(tmp.dir, 'v7.db');
    const db = openDatabase(path, AUDIT_MIGRATIONS.slice(0, 7));
    // Written as version 7's inserter wrote them: the row, the event as received and its text.
    const some = events.slice(0, 400);
    const columns = ['eventId', 'ts', 'eventType', 'memberEmail', 'memberId', 'memberType', 'verb', 'status'];
    const more = ['category', 'groupId', 'folderRef', 'projectRef', 'requestId', 'correlationId', 'resourceId'];
    const snake = (c: string) => c.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`);
    const put = db.prepare(
      `INSERT INTO events (seq, ${[...columns, ...more].map(snake).join(', ')}, origin)
      VALUES (@seq, ${[...columns, ...more].map((c) => `@${c}`).join(', ')}, 'import')`,
    );
    db.transaction(() => {
      some.forEach((e, i) => {
        const { raw, text, names: _names, ...r } = rowOf(e);
        const seq = r.ts * 1024 + (i % 1024);
        put.run({ ...r, seq });
        db.prepare('INSERT INTO events_raw (seq, raw) VALUES (?, ?)').run(seq, raw);
        db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)').run(seq, text);
      });
    })();
    const snapshot = (d: typeof db) =>
      d.prepare('SELECT e.*, r.raw FROM events AS e JOIN events_raw AS r USING (seq) ORDER BY seq').all();
    const before = snapshot(db);
    db.close();
    const old = openService(path);
    try {
      const sdb = old.store.db;
      expect(sdb.pragma('user_version', { simple: true })).toBe(AUDIT_MIGRATIONS.length);
      expect(snapshot(sdb)).toEqual(before);
      const ids = new Set(some.map((e) => e.event_id));
      const within = (search: string) => new Set([...expected(search)].filter((id) => ids.has(id)));
      for (const search of ['role_changed', 'folder', team.members[10].name.split(' ')[1]]) {
        expect(within(search).size).toBeGreaterThan(0);
        expect(new Set(walkPages(old, { search }, { field: 'date', dir: 'desc' }, 100))).toEqual(within(search));
      }
    } finally {
      await old.close();
    }
  });
});
