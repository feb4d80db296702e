import { describe, expect, it } from 'vitest';
import { checkEvent, isoUtcMs, MAX_EVENT_DEPTH } from '../../electron/core/audit/event.ts';

/** What the cache accepted before the digit-by-digit fast path: the ISO pattern, then Date.parse. */
const PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const reference = (s: string) => (PATTERN.test(s) ? Date.parse(s) : NaN);

describe('event dates', () => {
  it('reads every date exactly as Date.parse reads it, edge cases included', () => {
    const edge = [
      '2026-03-15T23:59:59.188Z',
      '2026-02-29T00:00:00.000Z',
      '2024-02-29T12:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-01-00T00:00:00.000Z',
      '2026-01-32T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T23:60:00.000Z',
      '2026-01-01T23:59:60.000Z',
      '0000-01-01T00:00:00.000Z',
      '0099-12-31T23:59:59.999Z',
      '0100-01-01T00:00:00.000Z',
      '2026-03-15T23:59:59.18Z',
      '2026-03-15T23:59:59Z',
      '2026-03-15 23:59:59.188Z',
      '2026-03-15T23:59:59.188+02:00',
      '2026-03-15T23:59:59.188',
      '2026-3-15T23:59:59.188Z',
      '2026-03-15T23:59:59.1a8Z',
      '2026-03-15T23:59:59.188z',
      '+02026-03-15T23:59:59.18Z',
      '',
    ];
    for (const s of edge) expect([s, isoUtcMs(s)]).toEqual([s, reference(s)]);
    // Seeded walk over every field's range and a little past it.
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const pad = (v: number, w: number) => String(v).padStart(w, '0');
    for (let i = 0; i < 20_000; i++) {
      const s = `${pad(next(3000), 4)}-${pad(next(15), 2)}-${pad(next(35), 2)}T${pad(next(26), 2)}:${pad(next(62), 2)}:${pad(next(62), 2)}.${pad(next(1000), 3)}Z`;
      expect([s, isoUtcMs(s)]).toEqual([s, reference(s)]);
    }
  });

  it('rejects a date that is not an ISO date-time, naming it', () => {
    const r = checkEvent({ event_id: 'e1', date: '15/03/2026', action: { event_type: 'a.b.c' } });
    expect(r).toEqual({ ok: false, reason: 'date "15/03/2026" is not an ISO 8601 date-time' });
  });
});

describe('event depth', () => {
  const nested = (levels: number) => `${'{"x":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const event = (extra: string) =>
    `{"event_id":"evt_1","date":"2026-03-15T23:59:59.188Z","action":{"event_type":"a.b.c"},"extra":${extra}}`;
  const check = (text: string) => checkEvent(JSON.parse(text), text);

  it('judges depth by the value, whatever brackets its strings hold and whether the text is given', () => {
    // 40 brackets in strings: more than the limit counted in the text, but the event is 2 levels deep.
    const shallow = event(JSON.stringify('{['.repeat(20)));
    expect(check(shallow).ok).toBe(true);
    expect(checkEvent(JSON.parse(shallow)).ok).toBe(true);
    // The event is level 1, so `extra` nesting MAX_EVENT_DEPTH - 1 objects reaches the limit exactly.
    expect(check(event(nested(MAX_EVENT_DEPTH - 1))).ok).toBe(true);
    for (const text of [event(nested(MAX_EVENT_DEPTH)), event(`[${nested(MAX_EVENT_DEPTH - 1)}]`)]) {
      const reason = `the event is nested deeper than ${MAX_EVENT_DEPTH} levels`;
      expect(check(text)).toEqual({ ok: false, reason });
      expect(checkEvent(JSON.parse(text))).toEqual({ ok: false, reason });
    }
  });
});
