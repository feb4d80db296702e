/**
 * The reading side of a staged or bulk load: a worker thread (stage-worker.ts) reads and checks the
 * file and hands rows in date order over packed (PackedRows), each written once, by the importer.
 * From the first batch that lands among the dates before, the rest goes to a scratch SQLite file
 * (the stage) that the cache moves in by date at the end (store/stage-copy.ts).
 */
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { ImportReject } from '../../../shared/contract/audit.ts';
import type { EventRow } from './event.ts';
import { inOrder, widen, type DateSpan } from './date-order.ts';
import { readParsed, type ReadTask } from './read.ts';

/** Stage columns (untyped: values are kept exactly), named as EventRow's fields so a staged row reads back as one. */
export const STAGE_COLUMNS = [
  'ts',
  'eventId',
  'eventType',
  'memberEmail',
  'memberId',
  'memberType',
  'verb',
  'status',
  'category',
  'groupId',
  'folderRef',
  'projectRef',
  'requestId',
  'correlationId',
  'resourceId',
  'raw',
  'text',
] as const;

export function stageTableSql(schema: string): string {
  // names: the search names new to this load (search.ts), each once, in the order first met.
  return `CREATE TABLE IF NOT EXISTS ${schema}.rows (id INTEGER PRIMARY KEY, ${STAGE_COLUMNS.join(', ')});
    CREATE TABLE IF NOT EXISTS ${schema}.names (id INTEGER PRIMARY KEY, value TEXT NOT NULL)`;
}

/** STAGE_COLUMNS but the date, in order: one row's values in PackedRows.values. */
export const PACKED_COLUMNS = STAGE_COLUMNS.slice(1);
const WIDTH = PACKED_COLUMNS.length;

/**
 * Rows as the reading thread hands them over: no object per row (cloning one cost ~4 times a flat
 * array's values, bench/history/audit-import.md). Row i's values are values[i * WIDTH ...].
 */
export interface PackedRows {
  ts: Float64Array;
  values: unknown[];
  /** The search names first met in these rows. */
  names: string[];
}

/**
 * What one batch tells the importer: its rows are in `rows`, or in the stage under ids
 * lo <= id < hi (none when lo = hi).
 */
export interface StagedBatch {
  kind: 'batch';
  lo: number;
  hi: number;
  rows?: PackedRows;
  /** The batch's dates, ascending (its rows take ids in file order). */
  ts: Float64Array;
  /** Items read since the previous batch, rejected ones included. */
  items: number;
  rejects: ImportReject[];
  warnings: string[];
  fatal: string | null;
  done: boolean;
  /** On the last batch: the signal stopped the reading before the end of the file. */
  stopped: boolean;
  /** The file's bytes read so far (for the import's progress). */
  bytesRead: number;
}

export interface StageTask extends ReadTask {
  stagePath: string;
  /** Rows per staged batch (one transaction of the stage, one message to the importer). */
  batchSize: number;
  /** Batches in date order are handed over as PackedRows, staged only from the first that is not. */
  direct?: boolean;
}

/** Rows packed as read, for one PackedRows. */
class Packer {
  private values: unknown[] = [];
  private ts = new Float64Array(1024);
  private names: string[] = [];
  private readonly seen = new Set<string>();
  count = 0;

  add(r: EventRow): void {
    // PACKED_COLUMNS' order.
    this.values.push(
      r.eventId,
      r.eventType,
      r.memberEmail,
      r.memberId,
      r.memberType,
      r.verb,
      r.status,
      r.category,
      r.groupId,
      r.folderRef,
      r.projectRef,
      r.requestId,
      r.correlationId,
      r.resourceId,
      r.raw,
      r.text,
    );
    if (this.count === this.ts.length) this.ts = grow(this.ts);
    this.ts[this.count++] = r.ts;
    for (const n of r.names) {
      if (this.seen.has(n)) continue;
      this.seen.add(n);
      this.names.push(n);
    }
  }

  take(): PackedRows {
    const p = { ts: this.ts.slice(0, this.count), values: this.values, names: this.names };
    this.values = [];
    this.names = [];
    this.count = 0;
    return p;
  }
}

function grow(a: Float64Array): Float64Array<ArrayBuffer> {
  const grown = new Float64Array(a.length * 2);
  grown.set(a);
  return grown;
}

class StageWriter {
  private readonly db: Database.Database;
  private readonly put: Statement;
  private readonly begin: Statement;
  private readonly end: Statement;
  private nextId: number;
  /** A batch's transaction is open (add, commit). */
  private open = false;
  private lo = 0;
  /** The dates of the batch in hand, in file order. */
  private dates = new Float64Array(1024);
  private count = 0;
  /** Names already staged by this load: each goes to the stage once, so the copy adds few. */
  private readonly staged = new Set<string>();
  private readonly putName: Statement;

  constructor(path: string) {
    this.db = new Database(path);
    // The importer reads committed batches while this connection writes the next: WAL. Nothing
    // here needs to survive a crash (a dead import's stage is deleted), hence no sync.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(stageTableSql('main'));
    // A writer taking over from one that failed to start continues after whatever it left.
    this.nextId = this.db.prepare('SELECT coalesce(max(id) + 1, 0) FROM rows').pluck().get() as number;
    this.begin = this.db.prepare('BEGIN');
    this.end = this.db.prepare('COMMIT');
    this.putName = this.db.prepare('INSERT INTO names (value) VALUES (?)');
    this.put = this.db.prepare(
      `INSERT INTO rows (id, ${STAGE_COLUMNS.join(', ')}) VALUES (?, ${STAGE_COLUMNS.map(() => '?').join(', ')})`,
    );
  }

  /**
   * Writes one row into the batch in hand, opening its transaction with the first. Written as read,
   * rows die young in V8: 5,000 held until the commit were promoted, and collecting them cost ~2 s of
   * a 1M-event load (bench/history/audit-import.md, tenth round).
   */
  add(r: EventRow): void {
    this.opening();
    this.put.run(
      this.nextId,
      r.ts,
      r.eventId,
      r.eventType,
      r.memberEmail,
      r.memberId,
      r.memberType,
      r.verb,
      r.status,
      r.category,
      r.groupId,
      r.folderRef,
      r.projectRef,
      r.requestId,
      r.correlationId,
      r.resourceId,
      r.raw,
      r.text,
    );
    this.added(r.ts, r.names);
  }

  /** Stages packed rows as add() stages each (a load's first batch out of date order). */
  addPacked(p: PackedRows): void {
    for (let i = 0; i < p.ts.length; i++) {
      this.opening();
      this.put.run(this.nextId, p.ts[i], ...p.values.slice(i * WIDTH, (i + 1) * WIDTH));
      this.added(p.ts[i], i ? [] : p.names);
    }
  }

  /** Opens the batch's transaction with its first row. */
  private opening(): void {
    if (this.open) return;
    this.begin.run();
    this.open = true;
    this.lo = this.nextId;
  }

  /** After a row of date `ts` was put: its names staged (each once), its id taken. */
  private added(ts: number, names: readonly string[]): void {
    for (const n of names) {
      if (this.staged.has(n)) continue;
      this.staged.add(n);
      this.putName.run(n);
    }
    this.nextId++;
    if (this.count === this.dates.length) this.dates = grow(this.dates);
    this.dates[this.count++] = ts;
  }

  /** Rows in the batch in hand. */
  get pending(): number {
    return this.count;
  }

  /**
   * Commits the batch in hand (an empty one too), its rows under ids lo <= id < hi in file order. A
   * write that failed mid-batch (a full disk) may have rolled it back: it is then announced empty, and
   * the failure reaches the importer as the reading's stop.
   */
  commit(): Pick<StagedBatch, 'lo' | 'hi' | 'ts'> {
    let lo = this.open ? this.lo : this.nextId;
    let ts = this.dates.slice(0, this.count).sort();
    if (this.open) {
      this.open = false;
      if (this.db.inTransaction) this.end.run();
      else {
        lo = this.nextId;
        ts = new Float64Array(0);
      }
    }
    this.count = 0;
    return { lo, hi: this.nextId, ts };
  }

  /** A batch still open (the reading failed) is rolled back with the connection: only committed batches were announced. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Reads, parses and checks the file, handing accepted rows over packed (task.direct) or writing them
 * to the stage, and calling `emit` once per batch (and once at the end, `done`), in file order. An `emit` that returns a promise
 * (a copy waiting for the cache's lock, in this thread) holds the reading until it settles.
 */
export async function stageFile(
  task: StageTask,
  emit: (b: StagedBatch) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const writer = new StageWriter(task.stagePath);
  // Null once a batch fell among the dates before (or from the start without `direct`): rows are staged.
  let packer = task.direct ? new Packer() : null;
  let span: DateSpan = null;
  try {
    let items = 0;
    let rejects: ImportReject[] = [];
    let warnings: string[] = [];
    let fatal: string | null = null;
    let bytesRead = 0;
    const send = (done: boolean, stopped = false, rows?: PackedRows, ts?: Float64Array) => {
      const b: StagedBatch = {
        kind: 'batch',
        ...writer.commit(),
        ...(rows && { rows, ts: ts! }),
        items,
        rejects,
        warnings,
        fatal,
        done,
        stopped,
        bytesRead,
      };
      items = 0;
      rejects = [];
      warnings = [];
      fatal = null;
      ready.push(b);
    };
    // Emitted once the chunk that completed them is parsed: a parser's callback cannot wait.
    const ready: StagedBatch[] = [];
    // What `emit` threw: the staging's own failure, as a worker thread's is (not the reading's stop).
    const failed: { error?: unknown } = {};
    const drain = async () => {
      try {
        for (let b = ready.shift(); b; b = ready.shift()) await emit(b);
      } catch (err) {
        failed.error ??= err;
        throw err;
      }
    };
    const sendPacked = () => {
      const rows = packer!.take();
      const ts = rows.ts.slice().sort();
      if (inOrder(ts, span)) {
        span = widen(ts, span);
        return send(false, false, rows, ts);
      }
      packer = null;
      writer.addPacked(rows);
      send(false);
    };
    const { stopped } = await readParsed(
      task,
      {
        row: (r) => {
          items++;
          if (packer) {
            packer.add(r);
            if (packer.count >= task.batchSize) sendPacked();
          } else {
            writer.add(r);
            if (writer.pending >= task.batchSize) send(false);
          }
        },
        reject: (r) => {
          items++;
          rejects.push(r);
        },
        fatal: (reason) => (fatal ??= reason),
        warning: (m) => warnings.push(m),
      },
      { signal, onRead: (b) => (bytesRead = b), drain },
    );
    if ('error' in failed) throw failed.error;
    if (packer?.count) sendPacked();
    send(true, stopped);
    await drain();
  } finally {
    writer.close();
  }
}
