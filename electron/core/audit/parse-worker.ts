/**
 * Reads, parses and checks one import file off the main thread (import.ts), so parsing and the
 * SQLite writes run on two cores. Rows go back in batches packed as one string plus lengths: a
 * string is copied as one block, where a batch of row objects costs the receiving thread a
 * property-by-property rebuild. The sender waits for an acknowledgement once two batches are in
 * flight, so memory stays at a few batches whatever the file size.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ImportReject } from '../../../shared/contract/audit.ts';
import type { EventRow } from './event.ts';
import { readParsed, type ReadTask } from './read.ts';

/** The string fields of EventRow in packing order; numbers travel in `nums`. */
export const PACKED_STRINGS = ['eventId', 'eventType', 'memberEmail', 'memberType', 'verb', 'status', 'category', 'folderRef', 'projectRef', 'requestId', 'correlationId', 'resourceId', 'raw', 'text'] as const;

export interface PackedBatch {
  kind: 'batch';
  /** Items read since the previous message (rejected ones included). */
  items: number;
  rejects: ImportReject[];
  warnings: string[];
  fatal: string | null;
  count: number;
  text: string;
  /** Per row and string field: its length, -1 for null. */
  lens: Int32Array;
  /** Per row: ts, memberId, groupId (NaN for null). */
  nums: Float64Array;
  done: boolean;
}

export function pack(rows: readonly EventRow[]): Pick<PackedBatch, 'count' | 'text' | 'lens' | 'nums'> {
  const parts: string[] = [];
  const lens = new Int32Array(rows.length * PACKED_STRINGS.length);
  const nums = new Float64Array(rows.length * 3);
  let i = 0;
  rows.forEach((r, n) => {
    for (const f of PACKED_STRINGS) {
      const v = r[f];
      if (v === null) lens[i++] = -1;
      else {
        lens[i++] = v.length;
        parts.push(v);
      }
    }
    nums[n * 3] = r.ts;
    nums[n * 3 + 1] = r.memberId ?? NaN;
    nums[n * 3 + 2] = r.groupId ?? NaN;
  });
  return { count: rows.length, text: parts.join(''), lens, nums };
}

export function unpack(b: Pick<PackedBatch, 'count' | 'text' | 'lens' | 'nums'>): EventRow[] {
  const rows: EventRow[] = new Array(b.count);
  const { text, lens, nums } = b;
  let pos = 0;
  let i = 0;
  const next = (): string | null => {
    const l = lens[i++];
    if (l < 0) return null;
    const s = text.slice(pos, pos + l);
    pos += l;
    return s;
  };
  for (let n = 0; n < b.count; n++) {
    const eventId = next()!;
    const eventType = next()!;
    const memberEmail = next()!;
    const memberType = next();
    const verb = next();
    const status = next();
    const category = next();
    const folderRef = next();
    const projectRef = next();
    const requestId = next();
    const correlationId = next();
    const resourceId = next();
    const raw = next()!;
    const rowText = next()!;
    const memberId = nums[n * 3 + 1];
    const groupId = nums[n * 3 + 2];
    rows[n] = {
      eventId, ts: nums[n * 3], eventType, memberEmail, memberId: Number.isNaN(memberId) ? null : memberId, memberType, verb, status, category,
      groupId: Number.isNaN(groupId) ? null : groupId, folderRef, projectRef, requestId, correlationId, resourceId, raw, text: rowText,
    };
  }
  return rows;
}

async function run(task: ReadTask, port: NonNullable<typeof parentPort>): Promise<void> {
  let inFlight = 0;
  let wake: (() => void) | null = null;
  port.on('message', () => {
    inFlight--;
    wake?.();
    wake = null;
  });
  let rows: EventRow[] = [];
  let items = 0;
  let rejects: ImportReject[] = [];
  let warnings: string[] = [];
  let fatal: string | null = null;
  const send = async (done: boolean) => {
    const packed = pack(rows);
    const msg: PackedBatch = { kind: 'batch', items, rejects, warnings, fatal, ...packed, done };
    rows = [];
    items = 0;
    rejects = [];
    warnings = [];
    fatal = null;
    inFlight++;
    port.postMessage(msg, [packed.lens.buffer as ArrayBuffer, packed.nums.buffer as ArrayBuffer]);
    while (inFlight >= 2 && !done) await new Promise<void>((resolve) => (wake = resolve));
  };
  await readParsed(task, {
    row: (r) => {
      items++;
      rows.push(r);
    },
    reject: (r) => {
      items++;
      rejects.push(r);
    },
    fatal: (reason) => (fatal ??= reason),
    warning: (m) => warnings.push(m),
    full: () => rows.length >= task.batchSize,
    flush: () => send(false),
  });
  await send(true);
  port.close();
}

if (parentPort && (workerData as { auditParse?: ReadTask } | undefined)?.auditParse) {
  const port = parentPort;
  run((workerData as { auditParse: ReadTask }).auditParse, port).catch((err: unknown) => {
    port.postMessage({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
  });
}
