/**
 * The writing side of a load's stage: a worker thread (stage-worker.ts) reads, checks and writes the
 * rows into a scratch SQLite file that the cache copies in by SQL (store/stage-copy.ts), so the two
 * sides use two cores and no row crosses threads as a JS object.
 */
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { ImportReject } from '../../../shared/contract/audit.ts';
import type { EventRow } from './event.ts';
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

/** What one staged batch tells the importer: the rows are in the stage by then, under ids lo <= id < hi. */
export interface StagedBatch {
  kind: 'batch';
  lo: number;
  hi: number;
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
    if (!this.open) {
      this.begin.run();
      this.open = true;
      this.lo = this.nextId;
    }
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
    for (const n of r.names) {
      if (this.staged.has(n)) continue;
      this.staged.add(n);
      this.putName.run(n);
    }
    this.nextId++;
    if (this.count === this.dates.length) {
      const grown = new Float64Array(this.dates.length * 2);
      grown.set(this.dates);
      this.dates = grown;
    }
    this.dates[this.count++] = r.ts;
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
 * Reads, parses and checks the file, writing accepted rows to the stage and calling `emit` once per
 * committed batch (and once at the end, `done`), in file order. An `emit` that returns a promise
 * (a copy waiting for the cache's lock, in this thread) holds the reading until it settles.
 */
export async function stageFile(
  task: StageTask,
  emit: (b: StagedBatch) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const writer = new StageWriter(task.stagePath);
  try {
    let items = 0;
    let rejects: ImportReject[] = [];
    let warnings: string[] = [];
    let fatal: string | null = null;
    let bytesRead = 0;
    const send = (done: boolean, stopped = false) => {
      const b: StagedBatch = {
        kind: 'batch',
        ...writer.commit(),
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
    const { stopped } = await readParsed(
      task,
      {
        row: (r) => {
          items++;
          writer.add(r);
          if (writer.pending >= task.batchSize) send(false);
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
    send(true, stopped);
    await drain();
  } finally {
    writer.close();
  }
}
