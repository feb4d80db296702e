import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createDispatcher, type Reply } from '../../electron/core/dispatch.ts';
import { auditHandlers } from '../../electron/core/audit/handlers.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import type { ImportProgress, ImportReport } from '../../shared/contract/audit.ts';
import { makeEvent, openService, tempDir } from './helpers.ts';

/**
 * audit.import, audit.importCancel and the audit.importProgress event as every transport serves
 * them: the contract's dispatcher over the real service and a real SQLite cache.
 */
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const TOTAL = 40_000;
/** A file read row by row in 5,000-row batches, long enough (~1 s) for several progress events. */
const big = tmp.file('big.ndjson', Array.from({ length: TOTAL }, (_, i) => JSON.stringify(makeEvent(i))).join('\n') + '\n');
const size = statSync(big).size;

let service: AuditService;
let progress: ImportProgress[];
let dispatch: ReturnType<typeof createDispatcher>;
let n = 0;
beforeEach(() => {
  progress = [];
  service = openService(join(tmp.dir, `cache-${++n}.db`), { onImportProgress: (p) => progress.push(p) });
  dispatch = createDispatcher(auditHandlers(service));
});
afterEach(() => service.close());

const cached = () => service.store.counts().events;
function result<T>(r: Reply): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.result as T;
}
const importing = async (paths: string[]) => result<{ reports: ImportReport[] }>(await dispatch('audit.import', { paths })).reports;

describe('audit.import progress and stop', () => {
  it('sends progress with growing counts and the file\'s bytes read, at most ~10 a second', async () => {
    const small = tmp.file('small.ndjson', JSON.stringify(makeEvent(TOTAL + 1)) + '\n');
    const started = performance.now();
    const [a, b] = await importing([small, big]);
    const took = performance.now() - started;
    expect(a).toMatchObject({ accepted: 1 });
    expect(b).toMatchObject({ accepted: TOTAL, rejected: 0 });
    expect(b.interrupted).toBeUndefined();
    const ofBig = progress.filter((p) => p.path === big);
    expect(ofBig.length).toBeGreaterThanOrEqual(2);
    expect(ofBig.length).toBeLessThanOrEqual(Math.ceil(took / 100) + 1);
    expect(ofBig.every((p) => p.file === 2 && p.files === 2 && p.bytes?.bytes === size)).toBe(true);
    for (let i = 1; i < ofBig.length; i++) {
      expect(ofBig[i].items).toBeGreaterThan(ofBig[i - 1].items);
      expect(ofBig[i].accepted).toBeGreaterThan(ofBig[i - 1].accepted);
      expect(ofBig[i].bytes!.bytesRead).toBeGreaterThanOrEqual(ofBig[i - 1].bytes!.bytesRead);
    }
    expect(ofBig.at(-1)!.bytes!.bytesRead).toBeLessThanOrEqual(size);
    expect(progress.find((p) => p.path === small)).toMatchObject({ file: 1, files: 2, accepted: 1 });
  });

  it('a stop keeps a committed prefix and says interrupted; the files after are not read; importing again adds the rest', async () => {
    expect(result(await dispatch('audit.importCancel', {}))).toEqual({ stopped: false });
    const after = tmp.file('after.ndjson', JSON.stringify(makeEvent(TOTAL + 2)) + '\n');
    let second: Promise<Reply> | null = null;
    let cancel: Promise<Reply> | null = null;
    await service.close();
    service = openService(join(tmp.dir, `cache-${++n}.db`), {
      onImportProgress: (p) => {
        progress.push(p);
        if (cancel) return;
        second = dispatch('audit.import', { paths: [after] });
        cancel = dispatch('audit.importCancel', {});
      },
    });
    dispatch = createDispatcher(auditHandlers(service));
    const reports = await importing([big, after]);
    expect(result(await cancel!)).toEqual({ stopped: true });
    const refused = await second!;
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error).toMatchObject({ code: 'conflict', message: expect.stringMatching(/already running/) });

    expect(reports).toHaveLength(1);
    const [r] = reports;
    expect(r.interrupted).toBe(true);
    expect(r.accepted).toBeGreaterThan(0);
    expect(r.accepted).toBeLessThan(TOTAL);
    expect(cached()).toBe(r.accepted);
    // A prefix: the first events of the file, in file order, and none after them.
    const ids = new Set((service.store.db.prepare('SELECT event_id FROM events').pluck().all() as string[]));
    expect(Array.from({ length: r.accepted }, (_, i) => `evt_${i}`).every((id) => ids.has(id))).toBe(true);
    expect(ids.has('evt_' + (TOTAL + 2))).toBe(false);

    // Nothing runs now: a stop is a no-op, an import goes ahead.
    expect(result(await dispatch('audit.importCancel', {}))).toEqual({ stopped: false });
    const [again] = await importing([big]);
    expect(again).toMatchObject({ items: TOTAL, accepted: TOTAL - r.accepted, duplicates: r.accepted, rejected: 0 });
    expect(again.interrupted).toBeUndefined();
    expect(cached()).toBe(TOTAL);
  });
});
