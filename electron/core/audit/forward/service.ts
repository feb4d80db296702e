import { sinkTarget, type SinkConfig } from '../../../../shared/audit-sinks.ts';
import type { ForwardStatus, SinkStatus } from '../../../../shared/contract/audit-forward.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { realClock, type Clock } from '../../clock.ts';
import type { Db } from '../../db/open.ts';
import { forwardSink, type ForwardReport } from './forwarder.ts';
import { ForwardLeases, heldText, LEASE_RENEW_MS } from './lease.ts';
import { ArchiveReader } from './read.ts';
import type { Sink } from './sink.ts';
import { FileSink } from './sinks/file.ts';
import { HecSink } from './sinks/hec.ts';
import { Watermarks } from './watermarks.ts';

/** The sinks' secrets (core/secrets.ts SinkSecrets). */
export interface SinkSecretStore {
  get(id: string): Promise<string | null>;
  set(id: string, secret: string): Promise<void>;
  clear(id: string): Promise<void>;
}

export interface ForwarderOptions {
  /** audit.db (AuditStore.db). */
  db: Db;
  /** The sinks and the after-sync setting, from the one settings module. */
  settings: () => { auditSinks: SinkConfig[]; forwardAfterAuditSync: boolean };
  saveSinks: (sinks: SinkConfig[]) => void;
  secrets: SinkSecretStore;
  clock?: Clock;
  random?: () => number;
  /** Each secret read, so the log never writes it. */
  onSecret?: (secret: string) => void;
  onBatch?: (r: ForwardReport) => void;
  onRetry?: (sinkId: string, error: string, waitMs: number) => void;
  /** Events a request at most (batchEventsFromEnv); MAX_BATCH_EVENTS when not given. */
  maxBatchEvents?: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Forwarding from the local audit archive to the configured sinks, each from its own watermark. */
export class AuditForwarder {
  private readonly opts: ForwarderOptions;
  private readonly clock: Clock;
  private readonly reader: ArchiveReader;
  private readonly marks: Watermarks;
  private readonly leases: ForwardLeases;
  private running: Promise<ForwardReport[]> | null = null;

  constructor(opts: ForwarderOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.reader = new ArchiveReader(opts.db);
    this.marks = new Watermarks(opts.db);
    this.leases = new ForwardLeases(opts.db);
  }

  private sinkNamed(id: string): SinkConfig {
    const s = this.opts.settings().auditSinks.find((x) => x.id === id);
    if (!s) throw new DeskError('not_found', `no audit sink "${id}" (mediadesk audit sinks list)`);
    return s;
  }

  private async open(cfg: SinkConfig): Promise<Sink> {
    if (cfg.kind === 'file') return new FileSink(cfg);
    const secret = await this.opts.secrets.get(cfg.id);
    if (secret) this.opts.onSecret?.(secret);
    if (cfg.kind === 'splunk-hec') {
      if (!secret)
        throw new DeskError(
          'invalid',
          `audit sink "${cfg.id}" has no HEC token: store it with mediadesk audit sinks add`,
        );
      return new HecSink(cfg, secret, this.clock);
    }
    // The OpenSearch and Elasticsearch clients are ~800 modules: loaded by the forward that needs them,
    // not by every command and host that opens the core.
    const { BulkSink } = await import('./sinks/bulk.ts');
    return new BulkSink(cfg, secret, this.clock);
  }

  /**
   * Delivers to every enabled sink (or the one named) what it has not received; one run at a time
   * in this process (a second caller shares it). A sink that fails does not stop the others.
   */
  forward(request: { sinkId?: string; signal?: AbortSignal } = {}): Promise<ForwardReport[]> {
    const sinks = request.sinkId
      ? [this.sinkNamed(request.sinkId)]
      : this.opts.settings().auditSinks.filter((s) => s.enabled);
    this.running ??= (async () => {
      const reports: ForwardReport[] = [];
      for (const cfg of sinks) {
        const report = await this.forwardLeased(cfg, request.signal);
        reports.push(report);
        if (request.signal?.aborted) break;
      }
      return reports;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * One sink, holding its lease (lease.ts) while it runs: another process forwarding it is said
   * (outcome busy, with its pid) and nothing is sent; a lease taken over meanwhile stops this run.
   */
  private async forwardLeased(cfg: SinkConfig, signal: AbortSignal | undefined): Promise<ForwardReport> {
    const ended = (outcome: ForwardReport['outcome'], error: string): ForwardReport => ({
      sinkId: cfg.id,
      outcome,
      delivered: 0,
      refused: 0,
      requests: 0,
      retries: 0,
      error,
    });
    // Wall time, never the forwarder's clock: the lease is read by other processes.
    const other = this.leases.acquire(cfg.id, Date.now());
    if (other) return ended('busy', heldText(cfg.id, other));
    const lost = new AbortController();
    const renew = setInterval(() => {
      if (!this.leases.renew(cfg.id, Date.now())) lost.abort(new Error('lease taken over'));
    }, LEASE_RENEW_MS).unref();
    try {
      let sink: Sink;
      try {
        sink = await this.open(cfg);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.marks.failure(cfg.id, message, this.clock.now());
        return ended('failed', message);
      }
      try {
        const report = await forwardSink({
          sink,
          reader: this.reader,
          marks: this.marks,
          clock: this.clock,
          random: this.opts.random,
          signal: signal ? AbortSignal.any([signal, lost.signal]) : lost.signal,
          onBatch: this.opts.onBatch,
          onRetry: this.opts.onRetry,
          maxBatchEvents: this.opts.maxBatchEvents,
        });
        if (lost.signal.aborted && !signal?.aborted)
          report.error = `another process took over forwarding to sink ${cfg.id}; what was acknowledged is kept`;
        return report;
      } finally {
        await sink.close();
      }
    } finally {
      clearInterval(renew);
      this.leases.release(cfg.id);
    }
  }

  /** After an audit sync or import, when the setting asks for it; what fails is in each sink's status. */
  afterSync(): void {
    if (!this.opts.settings().forwardAfterAuditSync) return;
    void this.forward().catch(() => {});
  }

  async status(): Promise<ForwardStatus> {
    const { auditSinks, forwardAfterAuditSync } = this.opts.settings();
    const sinks: SinkStatus[] = [];
    for (const cfg of auditSinks) {
      const st = this.marks.state(cfg.id);
      const held = this.leases.holder(cfg.id, Date.now());
      const behind = this.reader.pending(cfg.id, st.watermark);
      let state: SinkStatus['state'] = behind ? 'behind' : 'up-to-date';
      if (st.failingSince !== null) state = 'failing';
      if (!cfg.enabled) state = 'disabled';
      sinks.push({
        id: cfg.id,
        kind: cfg.kind,
        target: sinkTarget(cfg),
        enabled: cfg.enabled,
        secretSet: cfg.kind === 'file' || (await this.opts.secrets.get(cfg.id).catch(() => null)) !== null,
        state,
        behind,
        delivered: st.delivered,
        refused: this.marks.refusedCount(cfg.id),
        watermark: st.watermark
          ? { date: new Date(st.watermark.ts).toISOString(), eventId: st.watermark.eventId }
          : null,
        failingSince: iso(st.failingSince),
        lastError: st.lastError,
        lastSuccessAt: iso(st.lastSuccessAt),
        heldBy: held && { pid: held.pid, host: held.host },
      });
    }
    return { sinks, forwardAfterSync: forwardAfterAuditSync, running: this.running !== null };
  }

  async saveSink(sink: SinkConfig, secret?: string): Promise<ForwardStatus> {
    if (secret !== undefined) await this.opts.secrets.set(sink.id, secret);
    const list = this.opts.settings().auditSinks.filter((s) => s.id !== sink.id);
    this.opts.saveSinks([...list, sink]);
    return this.status();
  }

  async removeSink(id: string): Promise<ForwardStatus> {
    this.sinkNamed(id);
    this.opts.saveSinks(this.opts.settings().auditSinks.filter((s) => s.id !== id));
    this.marks.forget(id);
    await this.opts.secrets.clear(id);
    return this.status();
  }

  refused(id: string, limit: number) {
    this.sinkNamed(id);
    return this.marks
      .deadLetters(id, limit)
      .map((d) => ({ eventId: d.eventId, date: new Date(d.ts).toISOString(), reason: d.reason }));
  }
}
