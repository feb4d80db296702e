// Property-based: hostile files through the audit importers (JSON, NDJSON, CSV, standard input;
// row by row, staged and bulk loads). No import throws, the events cached before stay byte for
// byte as they were, what is added is what the report says, and nothing beyond the limits of one
// event is stored. FC_SEED=<n> replays a run; the seed is printed as the file starts.
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { storedEventProblem } from '../../electron/core/audit/event.ts';
import { csvRecord } from '../../electron/core/audit/export.ts';
import { CSV_COLUMNS } from '../../electron/core/audit/formats/csv.ts';
import type { LoadPath } from '../../electron/core/audit/import.ts';
import { cacheSnapshot, deepEventLine, makeEvent, openService, tempDir } from '../audit/helpers.ts';
import { fuzzRuns, hostileString, hostileValue } from './fuzz.ts';

fuzzRuns('test/fuzz/audit-import.test.ts', { numRuns: 300, timeMs: 30_000 });

const tmp = tempDir('md-fuzz-import-');
const service = openService(join(tmp.dir, 'cache.db'));
afterAll(() => {
  service.close();
  tmp.cleanup();
});

const CACHED = 40;
const [first] = await service.import([
  tmp.file('cached.ndjson', Array.from({ length: CACHED }, (_, i) => JSON.stringify(makeEvent(i))).join('\n') + '\n'),
]);
if (first.accepted !== CACHED) throw new Error(`the cache was not filled: ${JSON.stringify(first)}`);
const before = cacheSnapshot(service) as { seq: number }[];
const cachedSeqs = new Set(before.map((r) => r.seq));
const count = () => (service.store.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;

/** An event object: new, or one already cached with other contents; its fields hostile. */
const eventObject: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 0, max: CACHED - 1 }), fc.integer({ min: 1000, max: 1_000_000 })),
    fc.oneof(
      {
        arbitrary: fc.dictionary(
          fc.constantFrom('category', 'source', 'extra', 'notes', '__proto__', 'constructor'),
          hostileValue,
          { maxKeys: 2 },
        ),
        weight: 3,
      },
      fc.dictionary(fc.constantFrom('event_id', 'date', 'action', 'member'), hostileValue, { maxKeys: 2 }),
    ),
  )
  .map(([i, over]) => makeEvent(i, over));

/** One item's JSON text (or not JSON at all). */
const itemText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: eventObject.map((e) => JSON.stringify(e)), weight: 4 },
  fc
    .tuple(fc.integer({ min: 1000, max: 1_000_000 }), fc.integer({ min: 20, max: 8000 }))
    .map(([i, levels]) => deepEventLine(i, levels)),
  fc.integer({ min: 1000, max: 1_000_000 }).map((i) => JSON.stringify(makeEvent(i, { category: '€'.repeat(25_000) }))),
  hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
  fc.array(eventObject, { maxLength: 3 }).map((data) => JSON.stringify({ data, meta: { next_cursor: null } })),
  hostileString,
);

/** A CSV cell as a hostile tool writes it: quoted or not, with quotes, separators, line breaks, NUL. */
const csvCell = fc.oneof(
  hostileString,
  hostileString.map((s) => `"${s.replaceAll('"', '""')}"`),
  fc.constantFrom('""', '"', '"a""b"', '\r\n', ',', '\u0000', '{"a":'.repeat(50)),
);

const csvText: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      fc.constant([...CSV_COLUMNS] as string[]),
      fc.shuffledSubarray([...CSV_COLUMNS, 'data.group_id', '__proto__.x', 'colour', ''], { minLength: 1 }),
    ),
    fc.array(
      fc.oneof(
        { arbitrary: eventObject.map((e) => csvRecord(e)), weight: 3 },
        fc.array(csvCell, { maxLength: 25 }).map((cells) => cells.join(',') + '\r\n'),
      ),
      { maxLength: 12 },
    ),
  )
  .map(([header, rows]) => header.join(',') + '\r\n' + rows.join(''));

/** A whole file's text in one of the three formats, with what names it. */
const fileText = fc.oneof(
  fc
    .tuple(fc.array(itemText, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'))
    .map(([items, nl]) => ({ ext: '.ndjson', text: items.join(nl) + nl })),
  fc.array(itemText, { maxLength: 12 }).map((items) => ({ ext: '.json', text: `[${items.join(',\n')}]` })),
  csvText.map((text) => ({ ext: '.csv', text })),
);

/** Bytes that are not UTF-8 (a stray continuation, an overlong NUL, a surrogate, 0xFF), or NUL, put anywhere. */
const badBytes = fc.array(
  fc.tuple(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.constantFrom([0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xff], [0xfe, 0xff], [0x00], [0xe2, 0x82]),
  ),
  { maxLength: 4 },
);

const hostileFile = fc.record({
  file: fileText,
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  bad: fc.oneof({ arbitrary: fc.constant([]), weight: 3 }, badBytes),
  named: fc.constantFrom('ext', 'txt', 'format'),
  format: fc.constantFrom('ndjson', 'json', 'csv') as fc.Arbitrary<'ndjson' | 'json' | 'csv'>,
  load: fc.constantFrom<LoadPath | 'stdin'>('rows', 'rows', 'rows', 'staged', 'bulk', 'stdin'),
  chunks: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 5 }),
});

let n = 0;

describe('the audit importers under hostile files', () => {
  it('never throw, never change an event already cached, add what they report, and store nothing beyond the limits', async () => {
    await fc.assert(
      fc.asyncProperty(hostileFile, async (h) => {
        let bytes = Buffer.from(h.file.text, 'utf8');
        if (h.cut !== undefined) bytes = bytes.subarray(0, Math.floor(bytes.length * h.cut));
        for (const [at, b] of h.bad) {
          const i = Math.floor(bytes.length * at);
          bytes = Buffer.concat([bytes.subarray(0, i), Buffer.from(b), bytes.subarray(i)]);
        }
        const cachedBefore = count();
        let accepted: number;
        if (h.load === 'stdin') {
          // Standard input: the text in chunks cut anywhere, a character split or not.
          const text = bytes.toString('utf8');
          const at = [0, ...h.chunks.map((c) => Math.floor(text.length * c)).sort((a, b) => a - b), text.length];
          const parts = at
            .slice(1)
            .map((end, k) => text.slice(at[k], end))
            .filter((p) => p !== '');
          const r = await service.importStream(
            (async function* () {
              yield* parts;
            })(),
            h.named === 'format' ? { format: h.format } : {},
          );
          expect(r.items).toBe(r.accepted + r.duplicates + r.rejected + (r.notAdded ?? 0));
          accepted = r.accepted;
        } else {
          const path = tmp.file(`hostile-${++n}${h.named === 'txt' ? '.txt' : h.file.ext}`, bytes);
          const [r] = await service.import([path], {
            ...(h.named === 'format' ? { format: h.format } : {}),
            load: h.load,
            worker: false,
          });
          expect(r.items).toBe(r.accepted + r.duplicates + r.rejected + (r.notAdded ?? 0));
          accepted = r.accepted;
        }
        expect(count() - cachedBefore).toBe(accepted);
        const after = cacheSnapshot(service) as { seq: number; raw: string; event_id: string }[];
        expect(after.filter((r) => cachedSeqs.has(r.seq))).toEqual(before);
        for (const r of after) expect([r.event_id, storedEventProblem(r.raw)]).toEqual([r.event_id, null]);
      }),
    );
  }, 55_000);
});
