import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { deskErrorCodeOf } from '../dispatch.ts';
import type { AppDefinition, AppRun, AppSummary } from '../../../shared/contract/team.ts';
import { appInputProblems } from '../../../shared/validation/app-inputs.ts';
import { ApiError, type ApiClient } from '../api/client.ts';
import type { Pacer } from '../limits/pacer.ts';
import { assertOutputFolder } from '../output-folder.ts';
import { RESULT_SUFFIX_ROOM } from '../downloads/naming.ts';
import { windowsPathProblem } from '../../../shared/file-names.ts';
import { Uploader } from '../engine/uploader.ts';
import { creationFile, creationValue, type InputConfine } from './creation-input.ts';
import type { ResultMetadata } from '../metadata/result-metadata.ts';
import { metadataSettingsOf, type MetadataSettings } from '../../../shared/settings.ts';
import { AppRunner, explainAppError, type SandboxOwners } from './runner.ts';
import {
  AppRunStore,
  appStem,
  longestOutput,
  RUN_PART_ROOM,
  RETRYABLE,
  retryPlan,
  RUN_REQUEUE_FRESH,
  toAppRun,
} from './store.ts';
import { parseAppDefinition, parseAppList } from './wire.ts';
import { AppFamilies } from './family.ts';

/** A failed app call as a DeskError: the Enterprise-only 403 in plain words. */
function toDeskError(err: unknown): DeskError {
  if (err instanceof DeskError) return err;
  if (err instanceof ApiError) {
    return new DeskError(
      deskErrorCodeOf(err.status),
      explainAppError(err),
      err.invalidParams.length ? err.invalidParams : undefined,
    );
  }
  return new DeskError('internal', (err as Error).message);
}

/**
 * Checks every value against the app's definition (the form's own rules), before anything is paid.
 * With `check`, a named file is checked and not read (apps.check): the run reads it when it is sent.
 * `sources` gets the local image each creation input was read from (its results' metadata source).
 */
export async function prepareInputs(
  def: AppDefinition,
  raw: Record<string, string | number>,
  opts: {
    check?: boolean;
    sources?: Record<string, string>;
    upload?: (bytes: Buffer, contentType: string) => Promise<string>;
    /** A page's core: a local file must be one the person gave (PathPolicy.checkInput). */
    confine?: InputConfine;
  } = {},
): Promise<Record<string, unknown>> {
  const invalid = appInputProblems(def, raw);
  if (invalid.length)
    throw new DeskError('invalid', `${def.name}: ${invalid.map((p) => `${p.field} ${p.reason}`).join('; ')}`, invalid);
  const out: Record<string, unknown> = {};
  for (const input of def.inputs) {
    const v = raw[input.id];
    if (v === undefined || v === '') continue;
    if (input.type === 'number') out[input.id] = Number(v);
    else if (input.type === 'creation' && opts.check) await creationFile(String(v), input.id, opts.confine);
    else if (input.type === 'creation') {
      out[input.id] = await creationValue(String(v), input.id, opts.upload ?? refuseUpload, opts.confine);
      const file = opts.sources && (await creationFile(String(v), input.id));
      if (file) opts.sources![input.id] = file.abs;
    } else out[input.id] = String(v);
  }
  return out;
}

const refuseUpload = (): Promise<string> => Promise.reject(new Error('no uploader given for a local file'));

export interface AppsServiceOptions {
  client: ApiClient;
  store: AppRunStore;
  lease: () => boolean;
  /** Backend.identity(): which server a run is queued for, and whether a pending one may be followed. */
  backend: () => Promise<string>;
  builtInSandboxUrl?: () => Promise<string | null>;
  sandboxOwners?: SandboxOwners;
  /** The folder of an app's results when the request names none. */
  defaultOutDir: (appName: string) => string;
  onChange?: () => void;
  poll?: { firstMs: number; minMs: number; maxMs: number };
  /** The engine's pacer (RunnerOptions.pacer); absent, runs are not paced. */
  pacer?: Pacer | null;
  /** Whose path rules results keep (process.platform; see windowsPathProblem): tests pass win32. */
  platform?: string;
  /** The engine's: results get the local image's metadata and how the run made them. Absent: saved as downloaded. */
  metadata?: ResultMetadata;
  /** The metadata settings a run is queued with (frozen into it, as a batch's jobs are). */
  metadataSettings?: () => MetadataSettings;
  /** A page's core: each local file an input names must be one the person gave; absent for the CLI. */
  confine?: InputConfine;
  /** The runner's time (RunnerOptions.clock); real time by default. */
  clock?: Clock;
}

/** How long a title lookup waits for the apps list, and how often it asks for it again. */
const TITLES_WAIT_MS = 2000;
const TITLES_RELIST_MS = 60_000;

export class AppsService {
  readonly store: AppRunStore;
  readonly runner: AppRunner;
  readonly families: AppFamilies;
  private readonly opts: AppsServiceOptions;
  /** Apps' titles as the Apps screen shows them, by id, from every list and definition read. */
  private readonly titles = new Map<string, string>();
  private titlesListedAt = 0;
  private readonly uploader: Uploader;

  constructor(opts: AppsServiceOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.families = new AppFamilies(opts.store.db);
    this.uploader = new Uploader(opts.store.db, opts.client);
    this.runner = new AppRunner({
      families: this.families,
      store: opts.store,
      client: opts.client,
      lease: opts.lease,
      backend: opts.backend,
      builtInSandboxUrl: opts.builtInSandboxUrl,
      sandboxOwners: opts.sandboxOwners,
      onChange: opts.onChange,
      poll: opts.poll,
      pacer: opts.pacer,
      metadata: opts.metadata,
      metadataSettings: opts.metadataSettings,
      clock: opts.clock,
    });
  }

  async list(): Promise<AppSummary[]> {
    try {
      const backend = await this.opts.backend();
      const apps = parseAppList(await this.families.call(backend, (p) => this.opts.client.get(p.list)));
      for (const a of apps) this.titles.set(a.id, a.name);
      return apps;
    } catch (err) {
      throw toDeskError(err);
    }
  }

  /**
   * The user's own flows (`/v1/ai/me/flows`, or `me/apps` where the backend answers as apps), each
   * marked a draft when the published list does not hold it; unmarked when that list cannot be read.
   */
  async mine(): Promise<{ id: string; name: string; draft: boolean }[]> {
    try {
      const backend = await this.opts.backend();
      const own = parseAppList(await this.families.call(backend, (p) => this.opts.client.get(`/v1/ai/me/${p.family}`)));
      const published = await this.list().then(
        (apps) => new Set(apps.map((a) => a.id)),
        () => null,
      );
      return own.map((f) => ({ id: f.id, name: f.name, draft: published ? !published.has(f.id) : false }));
    } catch (err) {
      throw toDeskError(err);
    }
  }

  async get(id: string): Promise<AppDefinition> {
    try {
      const backend = await this.opts.backend();
      const def = parseAppDefinition(await this.families.call(backend, (p) => this.opts.client.get(p.one(id))));
      this.titles.set(def.id, def.name);
      return def;
    } catch (err) {
      throw toDeskError(err);
    }
  }

  /**
   * These apps' titles: as last read from the service, else the name a run was queued under, else from the
   * apps list (asked at most once a minute, waited for briefly: a slow server fills them in for the next ask).
   */
  async titlesOf(ids: readonly string[]): Promise<Map<string, string>> {
    const unknown = () => ids.filter((id) => !this.titles.has(id));
    for (const [id, name] of this.store.appNames(unknown())) this.titles.set(id, name);
    if (unknown().length && Date.now() - this.titlesListedAt > TITLES_RELIST_MS) {
      this.titlesListedAt = Date.now();
      const listed = this.list().catch(() => undefined);
      await Promise.race([listed, delay(TITLES_WAIT_MS, undefined, { ref: false })]);
    }
    return new Map(ids.flatMap((id) => (this.titles.has(id) ? [[id, this.titles.get(id)!] as const] : [])));
  }

  /**
   * The definition read now, and the inputs checked as run() checks them (a named file must exist
   * and be an image): asked before the cost is, so confirming it is the last step before paying.
   */
  async check(appId: string, inputs: Record<string, string | number>): Promise<AppDefinition> {
    const def = await this.get(appId);
    await prepareInputs(def, inputs, { check: true, confine: this.opts.confine });
    return def;
  }

  /**
   * Queues a run, unless the cost the user confirmed is no longer the definition's. With `resume`, a
   * pending run of the same app, inputs, folder and backend is followed instead (not paid again); the
   * lookup and the insert share one write transaction, so two processes cannot both queue.
   */
  async run(req: {
    appId: string;
    inputs: Record<string, string | number>;
    confirmedCost: number | null;
    outDir?: string;
    resume?: boolean | 'only';
  }): Promise<AppRun & { resumed: boolean }> {
    const def = await this.get(req.appId);
    const sources: Record<string, string> = {};
    // A local image is uploaded (and recorded: the same file is not sent twice) before anything is paid.
    const backend = await this.opts.backend();
    const upload = (bytes: Buffer, type: string) => this.uploader.assetUrl(backend, bytes, type);
    const inputs = await prepareInputs(def, req.inputs, { sources, upload, confine: this.opts.confine }).catch(
      (err: unknown) => {
        throw toDeskError(err);
      },
    );
    const outDir = resolve(req.outDir ?? this.opts.defaultOutDir(def.name));
    assertOutputFolder(outDir);
    // A result that cannot be written is a paid run lost: said before it is sent.
    const tooLong = windowsPathProblem(
      longestOutput(outDir, appStem({ id: '', appName: def.name, inputs, sources }), def.output ?? 'image'),
      this.opts.platform ?? process.platform,
      RESULT_SUFFIX_ROOM + RUN_PART_ROOM,
    );
    if (tooLong)
      throw new DeskError(
        'invalid',
        `output folder: its results cannot be written: ${tooLong}; choose an output folder with a shorter path`,
        [{ field: 'outDir', reason: tooLong }],
      );
    // A run it follows is reported as it stands.
    this.runner.settleGoneSandbox();
    const { row, resumed } = this.store.db
      .transaction(() => {
        const pending = req.resume ? this.store.unfinished(def.id, outDir, inputs, backend) : null;
        if (pending) return { row: pending, resumed: true };
        if (req.resume === 'only')
          throw new DeskError(
            'not_found',
            `no unfinished run of ${def.name} with these inputs and output folder on this backend`,
          );
        if (def.cost !== req.confirmedCost)
          throw new DeskError(
            'conflict',
            `${def.name} now costs ${def.cost ?? 'an unknown number of'} credits, not ${req.confirmedCost ?? 'unknown'}; confirm the new cost to run it`,
          );
        return {
          row: this.store.insert({
            id: randomUUID(),
            appId: def.id,
            appName: def.name,
            outputKind: def.output ?? 'image',
            cost: def.cost,
            inputs,
            outDir,
            backend,
            sources,
            metadata: this.opts.metadataSettings && metadataSettingsOf(this.opts.metadataSettings()),
          }),
          resumed: false,
        };
      })
      .immediate();
    // A paid run whose download failed: fetch its results again (retry never re-sends a paid run).
    if (row.state === 'failed') return { ...(await this.retry(row.id)), resumed };
    this.runner.kick();
    this.opts.onChange?.();
    return { ...toAppRun(row), resumed };
  }

  runs(limit = 50): AppRun[] {
    this.runner.settleGoneSandbox();
    return this.store.list(limit).map(toAppRun);
  }

  one(id: string): AppRun {
    this.runner.settleGoneSandbox();
    const r = this.store.get(id);
    if (!r) throw new DeskError('not_found', `no app run ${id}`);
    return toAppRun(r);
  }

  /** Answers once the run's download, if any, has stopped and its part is removed. */
  async cancel(id: string): Promise<AppRun> {
    this.runner.settleGoneSandbox();
    const r = this.store.get(id);
    if (!r) throw new DeskError('not_found', `no app run ${id}`);
    if (r.state === 'done' || r.state === 'canceled')
      throw new DeskError('conflict', `run ${id} is ${r.state}; there is nothing to cancel`);
    const why = r.runId
      ? 'Canceled; the run was already submitted and may still be charged.'
      : 'Canceled before submission.';
    if (!this.store.move(id, r.state, 'canceled', { error: why })) return this.cancel(id);
    this.opts.onChange?.();
    await this.runner.discardParts(id);
    return this.one(id);
  }

  /**
   * The user's act only. A paid run is never sent again: its results are fetched, or it is polled
   * (on its own backend). A run sent anew goes to `backend`, the one in use now, when given.
   */
  async retry(id: string, backend?: string, confirmedCost?: number | null): Promise<AppRun> {
    this.runner.settleGoneSandbox();
    const r = this.store.get(id);
    if (!r) throw new DeskError('not_found', `no app run ${id}`);
    if (!RETRYABLE.includes(r.state))
      throw new DeskError(
        'conflict',
        `run ${id} is ${r.state}; only failed, canceled or needs-attention runs can be retried`,
      );
    const plan = retryPlan(r);
    if (plan === 'submit') {
      // A new paid run, as apps.run is: the user confirms what it costs now, not what it cost then.
      const def = await this.get(r.appId);
      if (confirmedCost === undefined)
        throw new DeskError(
          'conflict',
          `retrying run ${id.slice(0, 8)} sends it again as a new run: ${def.name} costs ${def.cost ?? 'an unknown number of'} credits; confirm the cost to retry it`,
        );
      if (def.cost !== confirmedCost)
        throw new DeskError(
          'conflict',
          `${def.name} now costs ${def.cost ?? 'an unknown number of'} credits, not ${confirmedCost ?? 'unknown'}; confirm the new cost to retry it`,
        );
    }
    let ok: boolean;
    if (plan === 'download') ok = this.store.move(id, r.state, 'downloading', { error: null });
    else if (plan === 'poll') ok = this.store.move(id, r.state, 'running', { error: null, nextPollAt: Date.now() });
    else ok = this.store.move(id, r.state, 'queued', { ...RUN_REQUEUE_FRESH, ...(backend ? { backend } : {}) });
    if (!ok) throw new DeskError('conflict', `run ${id} changed while retrying; try again`);
    this.runner.kick();
    this.opts.onChange?.();
    return this.one(id);
  }
}
