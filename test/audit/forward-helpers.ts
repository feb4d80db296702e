import { AuditService } from '../../electron/core/audit/service.ts';
import { makeEvent, openService, rowOf } from './helpers.ts';

/** An archive of `n` events, several to a millisecond (the order's tie on event_id matters), in batches as an import writes them. */
export function fillArchive(dbPath: string, n: number, from = 0): AuditService {
  const service = openService(dbPath);
  for (let i = from; i < from + n; i += 5000) {
    const rows = [];
    for (let j = i; j < Math.min(from + n, i + 5000); j++)
      rows.push(
        rowOf(
          makeEvent(j, {
            event_id: `evt_${(j * 7919) % 1_000_003}_${j}`,
            date: new Date(Date.UTC(2026, 0, 1) + Math.floor(j / 3) * 1000).toISOString(),
          }),
        ),
      );
    service.store.insertBatch(rows, 'import');
  }
  return service;
}

export const json = async <T>(url: string, body?: unknown): Promise<T> => {
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};
