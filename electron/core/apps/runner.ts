/* eslint-disable max-lines -- Over 500 lines: one app run from start to saved results (poll, caps, expiry, download), read as one. */
import { randomUUID } from 'node:crypto';
import { fromAnotherSandbox } from '../backend.ts';
import { ensureFolder } from '../output-folder.ts';
import { ApiError, createFailure, placeTaken, type ApiClient } from '../api/client.ts';
import {
  downloadToPart,
  ExpiredUrlError,
  placedAs,
  placeWithoutOverwrite,
  removeQuietly,
  waitForRenewedLinks,
} from '../downloads/download.ts';
import { withCollisionSuffix } from '../downloads/naming.ts';
import { appRunProvenance, type ResultMetadata } from '../metadata/result-metadata.ts';
import { DEFAULT_SETTINGS, metadataSettingsOf, type MetadataSettings } from '../../../shared/settings.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import { apiProblem, refusedReason, RUN_SANDBOX_GONE, waitingMessage } from '../queue/job-messages.ts';
import { AppRunStore, plannedOutputs, runParts, RUN_REQUEUE_FRESH, type AppRunRow } from './store.ts';
import { parseRun, type RunView } from './wire.ts';
import { APP_FAMILIES, familyPaths, type AppFamilies } from './family.ts';
import { isDayHold, waitMessage } from '../limits/limiter.ts';
import type { Pacer } from '../limits/pacer.ts';
import { realClock, unrefTimer, type Clock, type ClockTimer } from '../clock.ts';

/** Result URLs of workflow apps are valid 12 hours (api-notes): downloaded at once. */
export const APP_RESULT_TTL_MS = 12 * 3_600_000;

export const ENTERPRISE_ONLY =
  'Workflow apps are available on Enterprise plans only, and this API key belongs to a team on another plan. Use a key of an Enterprise team (Settings → API key), or ask your team owner about upgrading.';

/** A 403 from an app endpoint is the plan restriction; say so plainly, keeping the server's words. */
export function explainAppError(err: unknown): string {
  if (err instanceof ApiError && err.status === 403) return `${ENTERPRISE_ONLY} (The server said: ${err.message})`;
  return err instanceof ApiError ? err.describe() : (err as Error).message;
}

/** Engine.sandboxOwners: this process's queue owner, and the live holder of the queue (null when none). */
export interface SandboxOwners {
  here: () => string;
  live: () => string | null;
}

export interface RunnerOptions {
  store: AppRunStore;
  /** Which of flows and apps each backend answers with (family.ts). */
  families: AppFamilies;
  client: ApiClient;
  /** Whether this process holds the queue (the engine's lease): only the holder submits, polls and downloads. */
  lease: () => boolean;
  /** Backend.identity(): a run is submitted and polled only on the backend it was queued for. */
  backend: () => Promise<string>;
  /** Backend.builtInSandboxUrl(): result URLs of another process's built-in Sandbox lead nowhere. */
  builtInSandboxUrl?: () => Promise<string | null>;
  /** Without it nothing is recorded or settled: runs on the built-in Sandbox are not told apart. */
  sandboxOwners?: SandboxOwners;
  onChange?: () => void;
  concurrency?: number;
  poll?: { firstMs: number; minMs: number; maxMs: number };
  tickMs?: number;
  /** How long lapsed result links are waited for when the run gives no fresh ones; default: until its results' 12 h end. */
  expiredPatienceMs?: number;
  /** The engine's pacer: runs and their polls count with the tool jobs' (each app's creates against the cap of `app:<id>`). */
  pacer?: Pacer | null;
  /** Writes the local image's metadata and the run's provenance into results; absent: saved as downloaded. */
  metadata?: ResultMetadata;
  /** The settings a run queued before they were frozen into it follows. */
  metadataSettings?: () => MetadataSettings;
  /** The time runs are polled, rechecked and retried on, and the ticks' timer; real time by default. */
  clock?: Clock;
}

/** How soon a run held at its app's daily cap looks again: a cap raised meanwhile lets it go. */
const CAP_RECHECK_MS = 5000;

/** The daily cap's key of a workflow app: its own line in the caps table, `*` by default. */
export const appCapKey = (appId: string) => `app:${appId}`;

const DEFAULT_POLL = { firstMs: 1000, minMs: 1000, maxMs: 15_000 };

/** Removes the part files and metadata copies of a run's results (plannedOutputs), except those from `keepFrom` on. */
async function removeParts(r: AppRunRow, keepFrom = Infinity): Promise<void> {
  for (const [i, p] of plannedOutputs(r).entries())
    if (i < keepFrom) {
      const { part, twin } = runParts(r, p);
      await removeQuietly(part);
      await removeQuietly(twin);
    }
}

/**
 * Drives app runs through the queue's state machine with the tool jobs' crash rules: `submitting` and
 * a fresh attempt id are committed before the POST, the run id on the 202. A run found `submitting`
 * may have been charged, so it goes to needs_attention and is never sent again without the user.
 */
export class AppRunner {
  private readonly opts: RunnerOptions;
  private readonly poll: { firstMs: number; minMs: number; maxMs: number };
  private readonly busy = new Map<string, Promise<void>>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly clock: Clock;
  private timer: ClockTimer | null = null;
  private leased = false;
  /** This process's backend (Backend.identity()), asked at most once a second; null until known. */
  private localBackend: string | null = null;
  private localBackendAt = 0;
  private asking = false;

  constructor(opts: RunnerOptions) {
    this.opts = opts;
    this.poll = opts.poll ?? DEFAULT_POLL;
    this.clock = opts.clock ?? realClock;
  }

  start(): void {
    if (this.timer) return;
    // Unref'd: the runner alone does not keep a process alive.
    const next = () =>
      (this.timer = unrefTimer(this.clock.setTimeout(() => (next(), this.tick()), this.opts.tickMs ?? 250)));
    next();
  }

  /**
   * Aborts downloads (their parts resume: the run stays `downloading`) but waits for a POST in
   * flight so its run id is stored. A download whose run was canceled meanwhile leaves no part.
   */
  async stop(): Promise<void> {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const downloads = [...this.aborts.keys()];
    for (const a of this.aborts.values()) a.abort();
    await Promise.allSettled([...this.busy.values()]);
    this.leased = false;
    if (this.opts.store.db.open) for (const id of downloads) await this.discardParts(id);
  }

  /** Resolves once no step this runner started (a submit, a poll, a download) is in flight. */
  async settled(): Promise<void> {
    while (this.busy.size) await Promise.allSettled([...this.busy.values()]);
  }

  kick(): void {
    if (this.timer) setImmediate(() => this.tick());
  }

  tick(): void {
    if (!this.opts.store.db.open) return void this.stop();
    try {
      // Every tick, held or not: a Queue that only listens for changes learns of it too.
      this.settleGoneSandbox();
      const held = this.opts.lease();
      if (held && !this.leased) this.recover();
      this.leased = held;
      if (!held) return;
      this.learnBackend();
      const limit = this.opts.concurrency ?? 4;
      let active = [...this.busy.keys()].length;
      // All queued rows, not the first few: runs waiting for another backend must not hold up this one's.
      for (const r of this.opts.store.inState('queued')) {
        if (active >= limit) break;
        if (this.busy.has(r.id) || !this.ours(r) || (r.nextPollAt ?? 0) > this.clock.now()) continue;
        active++;
        this.run(r.id, () => this.submit(r));
      }
      const now = this.clock.now();
      for (const r of this.opts.store.inState('running'))
        if (!this.busy.has(r.id) && this.ours(r) && (r.nextPollAt ?? 0) <= now) this.run(r.id, () => this.check(r));
      // Downloads go on whatever the backend: the result URLs are absolute and lapse in 12 hours.
      const downloading = this.opts.store.inState('downloading');
      for (const r of downloading) if (!this.busy.has(r.id)) this.run(r.id, () => this.download(r));
      // Canceled by another process (apps cancel, the app's Queue) while downloading here.
      for (const id of this.aborts.keys())
        if (!downloading.some((r) => r.id === id)) this.background(this.discardParts(id));
    } catch (err) {
      // One failed tick (locked DB, closed file) must not stop the runner; the next one retries.
      console.error(`mediadesk apps: ${(err as Error).message}`);
    }
  }

  private learnBackend(): void {
    if (this.asking || this.clock.now() - this.localBackendAt < 1000) return;
    this.asking = true;
    this.opts
      .backend()
      .then(
        (b) => {
          const changed = b !== this.localBackend;
          this.localBackend = b;
          // A closed or locked file: the next change of backend, or the next process, adopts them.
          if (changed && this.opts.store.db.open)
            try {
              this.opts.store.adoptUnowned(b);
            } catch {
              /* see above */
            }
          this.localBackendAt = this.clock.now();
          if (changed) this.kick();
        },
        () => undefined,
      )
      .finally(() => (this.asking = false));
  }

  /**
   * Whether this process may submit or poll the run: only on the backend it was queued for (a run id
   * means nothing elsewhere, and a Sandbox run must not be paid for live). Runs from before backends
   * were recorded wait until AppRunStore.adoptUnowned gives them this one.
   */
  private ours(r: AppRunRow): boolean {
    return r.backend !== null && r.backend === this.localBackend;
  }

  /** The exact check just before a request: the backend may have changed since the last answer. */
  private async stillOurs(r: AppRunRow): Promise<boolean> {
    return r.backend === null || r.backend === (await this.opts.backend());
  }

  /**
   * Applied before every read of app-run states (AppsService, each tick): a run whose built-in
   * Sandbox ended with its process is queued again, with a message (AppRunStore.requeueGoneSandbox).
   * Any process does it, holding the queue or not; the queue's next holder on the Sandbox sends it.
   */
  settleGoneSandbox(): void {
    const owners = this.opts.sandboxOwners;
    const gone = owners ? this.opts.store.requeueGoneSandbox(RUN_SANDBOX_GONE, owners.live()) : [];
    // Sent again, it gets a new run id and new names: its earlier parts would never be resumed.
    for (const r of gone) void removeParts(r);
    if (gone.length) this.opts.onChange?.();
  }

  private recover(): void {
    for (const r of this.opts.store.inState('submitting')) {
      // The built-in Sandbox stopped with the process that was sending (and is free): see REQUEUE_FRESH.
      if (r.backend === 'sandbox') this.opts.store.move(r.id, 'submitting', 'queued', RUN_REQUEUE_FRESH);
      else
        this.opts.store.move(r.id, 'submitting', 'needs_attention', {
          error: ATTENTION.interruptedSubmit.replace('task', 'run'),
        });
    }
    this.background(this.removeStaleParts());
  }

  /**
   * Parts left by a killed or stopped process, as the queue removes its jobs' (Engine.removeStaleParts):
   * those of runs not downloading now, and of results a downloading run has already placed. A run
   * still `downloading` keeps the part of the result it is on: this process resumes it.
   */
  private async removeStaleParts(): Promise<void> {
    for (const r of this.opts.store.withResultsNotDone()) {
      // Read again just before: a Retry since the list was read resumes its part.
      const now = this.opts.store.get(r.id);
      if (now) await removeParts(now, now.state === 'downloading' ? now.outputs.length : Infinity);
    }
  }

  /** Clean-up beside the ticks: a closed or locked file is said, as a failed tick is. */
  private background(p: Promise<void>): void {
    p.catch((err) => console.error(`mediadesk apps: ${(err as Error).message}`));
  }

  /** Results of the built-in Sandbox live in the process that ran it; see Engine.resultsGoneWithSandbox. */
  private async resultsGoneWithSandbox(r: AppRunRow): Promise<boolean> {
    const url = r.results?.[0]?.url;
    if (!this.opts.builtInSandboxUrl || !url || r.backend !== 'sandbox') return false;
    return fromAnotherSandbox(url, await this.opts.builtInSandboxUrl());
  }

  private run(id: string, fn: () => Promise<void>): void {
    const p = fn()
      .catch((err) => console.error(`mediadesk apps: run ${id}: ${(err as Error).stack ?? err}`))
      .finally(() => {
        this.busy.delete(id);
        this.opts.onChange?.();
      });
    this.busy.set(id, p);
  }

  private async submit(r: AppRunRow): Promise<void> {
    if (!(await this.stillOurs(r))) return;
    const { pacer } = this.opts;
    if (pacer) {
      const grant = await pacer.create(await pacer.scope(), appCapKey(r.appId));
      if (!grant.go) {
        const capped = isDayHold(grant.reason);
        this.opts.store.move(r.id, 'queued', 'queued', {
          error: capped ? waitMessage(grant, `the workflow app ${r.appName}`) : r.error,
          nextPollAt: capped ? this.clock.now() + CAP_RECHECK_MS : grant.resetsAt,
        });
        return;
      }
    }
    // On the built-in Sandbox the run lives in this process's: recorded, so that once this process
    // no longer holds the queue every reader knows the run is gone (AppRunStore.requeueGoneSandbox).
    const sandboxOf = r.backend === 'sandbox' ? (this.opts.sandboxOwners?.here() ?? null) : null;
    if (
      !this.opts.store.move(r.id, 'queued', 'submitting', {
        attemptId: randomUUID(),
        attempts: r.attempts + 1,
        error: null,
        invalid: null,
        sandboxOf,
      })
    )
      return;
    this.opts.onChange?.();
    let view: RunView;
    try {
      view = parseRun(
        await placeTaken(async () =>
          this.opts.families.call(await this.backendOf(r), (p) =>
            this.opts.client.create(p.run(r.appId), { inputs: r.inputs }),
          ),
        ),
      );
    } catch (err) {
      return this.onCreateError(r, err);
    }
    const now = this.clock.now();
    if (!view.runId) {
      // Accepted but unidentifiable: it may run and charge; only the user can decide.
      this.opts.store.move(r.id, 'submitting', 'needs_attention', {
        error: ATTENTION.ambiguousCreate('the server accepted the run without naming it').replace('task', 'run'),
      });
      return;
    }
    const moved = this.opts.store.move(r.id, 'submitting', 'running', {
      runId: view.runId,
      runStatus: view.status,
      submittedAt: now,
      nextPollAt: now + this.poll.firstMs,
    });
    // Canceled while the POST was in flight: keep the run id so the charge can be traced.
    if (!moved) this.opts.store.setRunId(r.id, view.runId);
  }

  private onCreateError(r: AppRunRow, err: unknown): void {
    const s = this.opts.store;
    const failure = createFailure(err);
    if (failure === 'wait' && err instanceof ApiError) {
      s.move(r.id, 'submitting', 'queued', {
        error: waitingMessage(refusedReason(err)),
        nextPollAt: this.clock.now() + 2000,
      });
    } else if (failure === 'refused' && err instanceof ApiError) {
      s.move(r.id, 'submitting', 'failed', { error: explainAppError(err), invalid: err.invalidParams });
    } else {
      s.move(r.id, 'submitting', 'needs_attention', {
        error: ATTENTION.ambiguousCreate(err instanceof ApiError ? apiProblem(err) : String(err)).replace(
          'task',
          'run',
        ),
      });
    }
  }

  /** The backend a run is for: its own, or (recorded before runs named one) the one in use. */
  private async backendOf(r: AppRunRow): Promise<string> {
    return r.backend ?? (await this.opts.backend());
  }

  /** The run's detail, from the family its backend answers with. */
  private async runDetail(r: AppRunRow): Promise<unknown> {
    return this.opts.families.call(await this.backendOf(r), (p) => this.opts.client.get(p.runOf(r.runId!)));
  }

  private async check(r: AppRunRow): Promise<void> {
    if (!(await this.stillOurs(r))) return;
    const { pacer } = this.opts;
    const grant = pacer ? await pacer.poll(await pacer.scope()) : null;
    if (grant && !grant.go)
      return void this.opts.store.move(r.id, 'running', 'running', { nextPollAt: grant.resetsAt });
    let view: RunView;
    try {
      view = parseRun(await placeTaken(() => this.runDetail(r)));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        if (r.backend === 'sandbox') this.opts.store.move(r.id, 'running', 'queued', RUN_REQUEUE_FRESH);
        else
          this.opts.store.move(r.id, 'running', 'needs_attention', {
            error: ATTENTION.lostTask.replace(/task/g, 'run'),
          });
      } else if (err instanceof ApiError && err.status === 403)
        this.opts.store.move(r.id, 'running', 'failed', { error: explainAppError(err) });
      else this.opts.store.move(r.id, 'running', 'running', { nextPollAt: this.clock.now() + this.poll.maxMs });
      return;
    }
    const now = this.clock.now();
    const partial =
      view.status === 'completed_with_errors'
        ? `Some steps failed${view.error ? `: ${view.error}` : ''}; the results that were produced are kept.`
        : null;
    if ((view.status === 'completed' || view.status === 'completed_with_errors') && view.results.length) {
      this.opts.store.move(r.id, 'running', 'downloading', {
        runStatus: view.status,
        results: view.results,
        expiresAt: now + APP_RESULT_TTL_MS,
        error: partial,
      });
    } else if (
      view.status === 'completed' ||
      view.status === 'completed_with_errors' ||
      view.status === 'failed' ||
      view.status === 'cancelled'
    ) {
      const why = runFailure(view.status, view.error);
      this.opts.store.move(r.id, 'running', 'failed', { runStatus: view.status, error: why });
    } else {
      // pending / running (or a status this build does not know): keep polling, backing off.
      const age = now - (r.submittedAt ?? now);
      const delay = Math.min(this.poll.maxMs, Math.max(this.poll.minMs, age / 4));
      this.opts.store.move(r.id, 'running', 'running', { runStatus: view.status, nextPollAt: now + delay });
    }
  }

  private async download(r: AppRunRow): Promise<void> {
    const ac = new AbortController();
    this.aborts.set(r.id, ac);
    try {
      if (await this.resultsGoneWithSandbox(r)) {
        if (this.opts.store.move(r.id, 'downloading', 'queued', RUN_REQUEUE_FRESH)) await removeParts(r);
        return;
      }
      await ensureFolder(r.outDir);
      let results = r.results ?? [];
      // Named once from the results as first known: fresh links (below) do not rename a part.
      const planned = plannedOutputs(r);
      const outputs = [...r.outputs];
      // The results are kept 12 h from the run's end: until then a lapsed link is worth renewing.
      const keptUntil =
        this.opts.expiredPatienceMs !== undefined
          ? this.clock.now() + this.opts.expiredPatienceMs
          : (r.expiresAt ?? this.clock.now() + APP_RESULT_TTL_MS);
      const { metadata } = this.opts;
      const settings = metadataSettingsOf(r.metadata ?? this.opts.metadataSettings?.() ?? DEFAULT_SETTINGS);
      const family = this.opts.families.known(await this.backendOf(r)) ?? APP_FAMILIES[0];
      const provenance = metadata ? appRunProvenance({ ...r, runPath: familyPaths(family).run(r.appId) }) : null;
      const notes: string[] = [];
      const note = (n: string | null) => n && !notes.includes(n) && notes.push(n);
      for (let i = outputs.length; i < results.length; i++) {
        const base = planned[i];
        const { part, twin } = runParts(r, base);
        // Placed by a run of this process that stopped before recording it.
        let placed = (await placedAs([part, twin], base)) ?? '';
        for (let round = 1; !placed; round++) {
          try {
            await downloadToPart(results[i].url, part, { signal: ac.signal });
            break;
          } catch (err) {
            if (!(err instanceof ExpiredUrlError) || ac.signal.aborted) throw err;
            // The links lapsed: the run record gives fresh ones (nothing is paid again).
            const fresh = parseRun(await this.runDetail(r)).results;
            if (fresh[i] && fresh[i].url !== results[i].url) {
              results = fresh;
              this.opts.store.move(r.id, 'downloading', 'downloading', { results });
            } else {
              await waitForRenewedLinks(err, round, keptUntil, ac.signal, this.clock);
            }
          }
        }
        if (!placed) {
          let finished = part;
          if (provenance) {
            const source = Object.values(r.sources)[0] ?? null;
            const meta = await metadata!.writeInto(part, twin, { final: base, source, provenance, settings });
            note(meta.problem);
            if (meta.written) finished = twin;
          }
          for (let k = 1; !placed; k++) {
            const candidate = withCollisionSuffix(base, k);
            if (await placeWithoutOverwrite(finished, candidate)) placed = candidate;
          }
        }
        outputs.push(placed);
        if (provenance && settings.provenanceSidecar) note(await metadata!.writeSidecar(placed, provenance));
        // Canceled meanwhile (another process): its part is of no more use either.
        const recorded = this.opts.store.move(r.id, 'downloading', 'downloading', { outputs });
        await removeQuietly(part);
        await removeQuietly(twin);
        if (!recorded) return;
      }
      const saved = notes.map((n) => `saved; ${n}`);
      this.opts.store.move(
        r.id,
        'downloading',
        'done',
        saved.length ? { error: [r.error, ...saved].filter(Boolean).join(' ') } : {},
      );
    } catch (err) {
      if (ac.signal.aborted) return;
      const msg = err instanceof ApiError ? err.describe() : (err as Error).message;
      this.opts.store.move(r.id, 'downloading', 'failed', {
        error: `Download failed: ${msg}. The run is paid; Retry downloads it again without a new charge.`,
      });
    } finally {
      this.aborts.delete(r.id);
    }
  }

  /**
   * A run that is no longer `downloading` (canceled here or by another process) keeps no part:
   * nothing would resume it. This process's download of it is stopped first, so no write follows.
   */
  async discardParts(id: string): Promise<void> {
    const ac = this.aborts.get(id);
    if (ac) {
      ac.abort();
      await this.busy.get(id);
    }
    const r = this.opts.store.get(id);
    if (r && r.state !== 'downloading') await removeParts(r);
  }
}

/** Why a finished run counts as failed, for its error. */
function runFailure(status: string, error: string | null | undefined): string {
  if (status === 'cancelled') return 'The run was cancelled on the server.';
  if (error) return `The run failed: ${error}`;
  return status === 'failed' ? 'The run failed on the server.' : 'The run finished without results.';
}
