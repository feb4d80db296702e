import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { AuditFilters, AuditSort } from '../../shared/contract/audit.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import { SPILL_FLAG } from '../../electron/core/audit/keys.ts';
import { makeEvent, openService, tempDir, walkPages } from './helpers.ts';
import { planOf as planIn, statementsOf } from '../query-plans.ts';

// Migration 10 dropped the date from every filter index (the row key follows it): the Audit screen's
// queries must still seek or walk an index, never read the whole table to sort it, and give the
// rows the date-column queries give (those a cache whose keys spilled still runs).
const COUNT = 800;
const tmp = tempDir();
let service: AuditService;

beforeAll(async () => {
  service = openService(join(tmp.dir, 'audit.db'));
  const events = Array.from({ length: COUNT }, (_, i) => makeEvent(i));
  const [r] = await service.import([tmp.file('all.ndjson', events.map((e) => JSON.stringify(e)).join('\n'))]);
  expect(r.accepted).toBe(COUNT);
});
afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

const FILTERS: AuditFilters[] = [
  {},
  { eventTypes: ['project.folder.shared'] },
  { memberIds: [2] },
  { groupIds: [102] },
  { folderRefs: ['fld_1'] },
  { from: '2026-03-02', to: '2026-03-04' },
  { from: '2026-03-02T10:00:00Z', to: '2026-03-03T09:59:59.999Z' },
  { eventTypes: ['team.member.role_changed'], from: '2026-03-03' },
  { memberIds: [3], to: '2026-03-02' },
  { requestId: 'req_40' },
  { search: 'denied' },
  { search: 'denied', from: '2026-03-02', to: '2026-03-03' },
  { search: 'user2@example.test', eventTypes: ['project.folder.shared'] },
];
const SORTS: AuditSort[] = [
  { field: 'date', dir: 'desc' },
  { field: 'date', dir: 'asc' },
  { field: 'event_type', dir: 'asc' },
  { field: 'member', dir: 'desc' },
];

const planOf = (sql: string, params: unknown[]) => planIn(service.store.db, sql, params);

/** What the screen asks for one filter and sort: pages walked by cursor, a page by offset, the total, facets, timeline. */
function screen(filters: AuditFilters, sort: AuditSort) {
  return {
    pages: walkPages(service, filters, sort, 37),
    deep: service.query({ filters, sort, limit: 20, offset: 45, withTotal: true }),
    facets: service.facets(filters, 50),
    timeline: service.timeline(filters, 'hour'),
  };
}

function setSpilled(on: boolean): void {
  if (on) service.store.db.prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, 1)').run(SPILL_FLAG);
  else service.store.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(SPILL_FLAG);
}

describe('audit queries over indexes without dates (migration 10)', () => {
  it('the filter indexes end in the row key alone; the date index stays for the forwarder', () => {
    const indexes = service.store.db
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
      .all() as { name: string; sql: string }[];
    expect(indexes.filter((i) => /\bts\b/.test(i.sql)).map((i) => i.name)).toEqual(['events_ts']);
  });

  it('filters, date ranges, search and paging read through an index and never sort the whole table', () => {
    for (const filters of FILTERS)
      for (const sort of SORTS) {
        const ran = statementsOf(service.store.db, () => screen(filters, sort)).filter((s) =>
          /\bFROM events\b/.test(s.sql),
        );
        expect(ran.length).toBeGreaterThan(0);
        for (const { sql, params } of ran) {
          const plan = planOf(sql, params);
          const what = `${JSON.stringify(filters)} ${sort.field} ${sort.dir}: ${sql}\n${plan.join('\n')}`;
          // A bare table scan is a walk in key (date) order; sorting what it read would read it all.
          if (plan.includes('SCAN events')) expect(plan.join('\n'), what).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
          const page = /LIMIT \? OFFSET \?$/.test(sql.trim());
          const sortIsFilter =
            sort.field === 'date' ||
            Object.keys(filters).every((k) => k === 'eventTypes' && sort.field === 'event_type');
          // A page in date order, or in a column's order under no other filter, comes straight off an
          // index. (A date range in a column's order sorts the range's rows: no index holds both now.)
          if (page && sortIsFilter && !filters.search)
            expect(plan.join('\n'), what).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
          // A filter seeks its index or the key range of its dates.
          if (page && Object.keys(filters).length && !filters.search && sort.field === 'date')
            expect(plan.join('\n'), what).toMatch(/SEARCH events USING|SCAN events USING (COVERING )?INDEX/);
        }
      }
  });

  it('gives the same rows, totals, facets and timeline as the date-column queries of a cache whose keys spilled', () => {
    for (const filters of FILTERS)
      for (const sort of SORTS) {
        const byKey = screen(filters, sort);
        setSpilled(true);
        try {
          expect(screen(filters, sort), `${JSON.stringify(filters)} ${sort.field} ${sort.dir}`).toEqual(byKey);
        } finally {
          setSpilled(false);
        }
        expect(byKey.pages.length).toBe(byKey.deep.total);
      }
    // The cache's span: the first and last keys' dates, or spilled the dates themselves: the same.
    const span = { events: COUNT, oldest: Date.UTC(2026, 2, 1), newest: Date.UTC(2026, 2, 1) + (COUNT - 1) * 600_000 };
    expect(service.store.counts()).toEqual(span);
    setSpilled(true);
    try {
      expect(service.store.counts()).toEqual(span);
    } finally {
      setSpilled(false);
    }
  });
});
