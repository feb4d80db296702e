/**
 * The writing side of a bulk import's stage: the file's accepted rows go into a scratch SQLite
 * file beside the cache, batch by batch, and the cache copies them in with INSERT ... SELECT
 * (store.ts, `StagedRows`). The stage is written by a worker thread (stage-worker.ts), so reading,
 * parsing, checking and binding row values run on one core while the cache's inserts, full-text
 * index and key picking run on the other, without a row ever crossing threads as JS objects.
 */
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { ImportReject } from '../../../shared/contract/audit.ts';
import type { EventRow } from './event.ts';
import { readParsed, type ReadTask } from './read.ts';

/** Stage columns (untyped: values are kept exactly), named as EventRow's fields so a staged row reads back as one. */
const STAGE_COLUMNS = ['ts', 'eventId', 'eventType', 'memberEmail', 'memberId', 'memberType', 'verb', 'status', 'category', 'groupId', 'folderRef', 'projectRef', 'requestId', 'correlationId', 'resourceId', 'raw', 'text'] as const;

export function stageTableSql(schema: string): string {
  return `CREATE TABLE IF NOT EXISTS ${schema}.rows (id INTEGER PRIMARY KEY, ${STAGE_COLUMNS.join(', ')})`;
}

/** What one staged batch tells the importer: the rows are in the stage by then, under ids lo <= id < hi. */
export interface StagedBatch {
  kind: 'batch';
  lo: number;
  hi: number;
  /** The batch's dates, ascending (rows take ids in this order, file order within a millisecond). */
  ts: Float64Array;
  /** Items read since the previous batch, rejected ones included. */
  items: number;
  rejects: ImportReject[];
  warnings: string[];
  fatal: string | null;
  done: boolean;
  /** On the last batch: the signal stopped the reading before the end of the file. */
  stopped: boolean;
}

export interface StageTask extends ReadTask {
  stagePath: string;
  /** Rows held as JS objects before they are written to the stage. */
  batchSize: number;
}

class StageWriter {
  private readonly db: Database.Database;
  private readonly put: Statement;
  private nextId: number;

  constructor(path: string) {
    this.db = new Database(path);
    // The importer reads committed batches while this connection writes the next: WAL. Nothing
    // here needs to survive a crash (a dead import's stage is deleted), hence no sync.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(stageTableSql('main'));
    // A writer taking over from one that failed to start continues after whatever it left.
    this.nextId = (this.db.prepare('SELECT coalesce(max(id) + 1, 0) FROM rows').pluck().get() as number);
    this.put = this.db.prepare(`INSERT INTO rows (id, ${STAGE_COLUMNS.join(', ')}) VALUES (?, ${STAGE_COLUMNS.map(() => '?').join(', ')})`);
  }

  write(rows: readonly EventRow[]): Pick<StagedBatch, 'lo' | 'hi' | 'ts'> {
    const sorted = rows.toSorted((a, b) => a.ts - b.ts);
    const lo = this.nextId;
    this.db.transaction(() => {
      for (const r of sorted) {
        this.put.run(this.nextId++, r.ts, r.eventId, r.eventType, r.memberEmail, r.memberId, r.memberType, r.verb, r.status, r.category,
          r.groupId, r.folderRef, r.projectRef, r.requestId, r.correlationId, r.resourceId, r.raw, r.text);
      }
    })();
    return { lo, hi: this.nextId, ts: Float64Array.from(sorted, (r) => r.ts) };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Reads, parses and checks the file, writing accepted rows to the stage and calling `emit` once per
 * committed batch (and once at the end, `done`), in file order.
 */
export async function stageFile(task: StageTask, emit: (b: StagedBatch) => void, signal?: AbortSignal): Promise<void> {
  const writer = new StageWriter(task.stagePath);
  try {
    let rows: EventRow[] = [];
    let items = 0;
    let rejects: ImportReject[] = [];
    let warnings: string[] = [];
    let fatal: string | null = null;
    const send = (done: boolean, stopped = false) => {
      const b: StagedBatch = { kind: 'batch', ...writer.write(rows), items, rejects, warnings, fatal, done, stopped };
      rows = [];
      items = 0;
      rejects = [];
      warnings = [];
      fatal = null;
      emit(b);
    };
    const { stopped } = await readParsed(task, {
      row: (r) => {
        items++;
        rows.push(r);
        if (rows.length >= task.batchSize) send(false);
      },
      reject: (r) => {
        items++;
        rejects.push(r);
      },
      fatal: (reason) => (fatal ??= reason),
      warning: (m) => warnings.push(m),
    }, { signal });
    send(true, stopped);
  } finally {
    writer.close();
  }
}
