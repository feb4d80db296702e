import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { JsonSchema, Operation } from '../../../shared/official/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { LoraKind, LoraTrainRequest, TrainCheck } from '../../../shared/contract/loras.ts';
import type { ToolPrice } from '../../../shared/prices.ts';
import { ApiError, createFailure, type ApiClient } from '../api/client.ts';
import {
  acceptsExtension,
  checkBytes,
  checkInput,
  DEFAULT_MAX_INPUT_BYTES,
  type InputCheck,
} from '../batch/preflight.ts';
import { scanInputs } from '../batch/scan.ts';
import { mapLimit } from '../../../shared/concurrency.ts';
import { loraGroups } from '../loras.ts';
import { Uploader } from '../engine/uploader.ts';
import { apiProblem, ATTENTION, refusedReason, waitingMessage } from '../queue/job-messages.ts';
import { toTraining, type TrainingRow, type TrainingStore } from './store.ts';

/** The service's training operations, by kind: the reference holds each one's body. */
export const TRAINING_PATH: Record<LoraKind, string> = {
  style: '/v1/ai/loras/styles',
  character: '/v1/ai/loras/characters',
};
/** The tool id a training's price is kept under (Settings › Prices, the price table). */
export const trainingPriceId = (kind: LoraKind) => `lora-${kind}`;

// The reference (2.5 MB of JSON) is read when a training is first checked, not by every process
// that opens the core.
const reference = () => import('../../../shared/official/index.ts');

type Reference = Awaited<ReturnType<typeof reference>>;

const operationOf = (ref: Reference, kind: LoraKind): Operation => {
  const op = ref.findOperation('POST', TRAINING_PATH[kind]);
  if (!op) throw new Error(`the reference has no POST ${TRAINING_PATH[kind]}`);
  return op;
};

/** The images a training takes: the formats the service reads, at most the engine's input size. */
const IMAGE_CHECK: InputCheck = {
  field: {
    kind: 'mediaList',
    name: 'images',
    label: 'Images',
    media: 'image',
    encodings: ['url'],
    formats: ['jpeg', 'png', 'webp'],
    max: 20,
  } as InputCheck['field'],
  maxBytes: DEFAULT_MAX_INPUT_BYTES,
};

/** What the reference says a field is, in a few words of help (the reference keeps no prose). */
function helpOf(name: string, s: JsonSchema, limits: { min: number; max: number }): string {
  if (name === 'images')
    return `${limits.min} to ${limits.max} images (JPEG, PNG or WebP), uploaded before it is sent.`;
  if (s.pattern === '^[a-zA-Z0-9-_]+$') return 'Letters, digits, - and _ only; the LoRA is known by this name.';
  return '';
}

function formOf(ref: Reference, op: Operation) {
  const body = ref.bodyObject(op)!;
  const props = body.properties as Record<string, JsonSchema>;
  const required = new Set((body.required as string[]) ?? []);
  const images = props.images;
  const limits = { min: Number(images.minItems ?? 1), max: Number(images.maxItems ?? 20) };
  const fields = Object.entries(props)
    // A desktop app is told by polling, never by a webhook.
    .filter(([name]) => name !== 'webhook_url')
    .map(([name, s]) => ({
      name,
      required: required.has(name),
      options: Array.isArray(s.enum) ? (s.enum as string[]) : null,
      pattern: typeof s.pattern === 'string' ? s.pattern : null,
      help: helpOf(name, s, limits),
    }));
  return { fields, limits };
}

function sniffType(b: Buffer): string {
  if (b[0] === 0x89 && b[1] === 0x50) return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8) return 'image/jpeg';
  return b.subarray(8, 12).toString('latin1') === 'WEBP' ? 'image/webp' : 'application/octet-stream';
}

/** The request as the service takes it, the images stood in by `images` (asset URLs, or placeholders to check). */
function bodyOf(req: LoraTrainRequest, fields: readonly { name: string }[]): Record<string, unknown> {
  const body: Record<string, unknown> = { name: req.name };
  for (const k of ['description', 'quality', 'gender'] as const)
    if (req[k] !== undefined && req[k] !== '' && fields.some((f) => f.name === k)) body[k] = req[k];
  // A field the kind does not take (gender for a style) is named by the reference's check.
  if (req.gender && !fields.some((f) => f.name === 'gender')) body.gender = req.gender;
  return body;
}

export interface TrainerOptions {
  store: TrainingStore;
  client: ApiClient;
  /** Whether this process holds the queue (the engine's lease): only the holder sends and polls. */
  lease: () => boolean;
  backend: () => Promise<string>;
  priceOf: (tool: string) => ToolPrice;
  onChange?: () => void;
  poll?: { firstMs?: number; minMs?: number };
  tickMs?: number;
}

/**
 * LoRA trainings as durable queue jobs: checked against the reference before anything is paid,
 * images uploaded through the service's flow, `submitting` committed before the create, and
 * followed in the catalogue (GET /v1/ai/loras, where the description says a training is seen)
 * until the new LoRA is trained. A training found `submitting` after a crash is looked for by its
 * name there before anything else: found, it is followed, never sent twice.
 */
export class LoraTrainer {
  private readonly opts: TrainerOptions;
  private readonly uploader: Uploader;
  private readonly busy = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private leased = false;
  private readonly firstMs: number;
  private readonly minMs: number;

  constructor(opts: TrainerOptions) {
    this.opts = opts;
    this.uploader = new Uploader(opts.store.db, opts.client);
    this.firstMs = opts.poll?.firstMs ?? 1000;
    this.minMs = opts.poll?.minMs ?? 1000;
  }

  /** Every problem of a training request, the images read and counted; nothing is sent. */
  async check(req: LoraTrainRequest): Promise<TrainCheck & { body: Record<string, unknown> }> {
    const ref = await reference();
    const op = operationOf(ref, req.kind);
    const { fields, limits } = formOf(ref, op);
    const scan = await scanInputs(req.inputs, (ext) => acceptsExtension(IMAGE_CHECK, ext));
    const reasons = await mapLimit(scan.inputs, 8, (i) => checkInput(IMAGE_CHECK, i.path));
    const skipped = [...scan.rejected, ...scan.duplicates, ...scan.results];
    const images: string[] = [];
    scan.inputs.forEach((i, n) =>
      reasons[n] ? skipped.push({ path: i.path, reason: reasons[n]! }) : images.push(i.path),
    );
    const body = bodyOf(req, fields);
    const stand = images.map((_, i) => `https://example.com/training-${i + 1}.png`);
    const problems = ref
      .requestProblems(op, { ...body, images: stand })
      .map((p) =>
        p.field === 'images'
          ? { field: 'images', reason: `must be ${limits.min} to ${limits.max} images; ${images.length} can be sent` }
          : p,
      );
    const named = this.opts.store.openNamed(req.kind, req.name);
    if (named)
      problems.push({
        field: 'name',
        reason: `is the name of a ${req.kind} training already ${named.state === 'done' ? 'done' : 'under way'}`,
      });
    const price = this.opts.priceOf(trainingPriceId(req.kind));
    return {
      ok: problems.length === 0,
      images,
      skipped,
      problems,
      fields,
      limits,
      price: {
        credits: price.effective,
        note:
          price.effective === null
            ? `Price unknown: ${price.note ?? 'the service publishes none'}.`
            : `${price.effective} credits a training${price.own !== null ? ' (your own price)' : ''}.`,
      },
      body,
    };
  }

  /** Queues a training once its check passes; refused with every problem otherwise. */
  async train(req: LoraTrainRequest) {
    const c = await this.check(req);
    if (!c.ok)
      throw new DeskError(
        'invalid',
        `The ${req.kind} LoRA cannot be trained: ${c.problems.map((p) => `${p.field} ${p.reason}`).join('; ')}`,
        c.problems,
      );
    const row = this.opts.store.insert({
      id: randomUUID(),
      kind: req.kind,
      name: req.name,
      body: c.body,
      sources: c.images,
      backend: await this.opts.backend(),
    });
    this.opts.onChange?.();
    this.kick();
    return { training: toTraining(row) };
  }

  list(limit?: number) {
    return this.opts.store.list(limit).map(toTraining);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.opts.tickMs ?? 250);
    this.timer.unref();
  }

  /** Waits for a create in flight, so its task id is stored before the database closes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.busy.values()]);
  }

  /** Resolves once no step this trainer started is in flight. */
  async settled(): Promise<void> {
    while (this.busy.size) await Promise.allSettled([...this.busy.values()]);
  }

  kick(): void {
    if (this.timer) setImmediate(() => this.tick());
  }

  private tick(): void {
    if (!this.opts.store.db.open) return void this.stop();
    try {
      const held = this.opts.lease();
      const gained = held && !this.leased;
      this.leased = held;
      if (!held) return;
      const now = Date.now();
      if (gained) for (const r of this.opts.store.inState('submitting')) this.run(r, () => this.reconcile(r));
      for (const state of ['queued', 'training'] as const)
        for (const r of this.opts.store.inState(state))
          if (!this.busy.has(r.id) && (r.nextPollAt ?? 0) <= now)
            this.run(r, () => (state === 'queued' ? this.submit(r) : this.follow(r)));
    } catch (err) {
      console.error(`mediadesk loras: ${(err as Error).message}`);
    }
  }

  private run(r: TrainingRow, fn: () => Promise<void>): void {
    if (this.busy.has(r.id)) return;
    const p = fn()
      .catch((err) => console.error(`mediadesk loras: training ${r.id}: ${(err as Error).stack ?? err}`))
      .finally(() => {
        this.busy.delete(r.id);
        this.opts.onChange?.();
      });
    this.busy.set(r.id, p);
  }

  private async submit(r: TrainingRow): Promise<void> {
    if (r.backend !== null && r.backend !== (await this.opts.backend())) return;
    const s = this.opts.store;
    const images: string[] = [];
    try {
      for (const path of r.sources) {
        const bytes = await readFile(path);
        // The bytes about to be sent, checked again: a file changed since it was queued is not paid for.
        const problem = await checkBytes(IMAGE_CHECK, bytes);
        if (problem) {
          s.move(r.id, 'queued', 'failed', { error: `${path} ${problem}; nothing was sent or paid for.` });
          return;
        }
        images.push(await this.uploader.assetUrl(r.backend, bytes, sniffType(bytes)));
      }
    } catch (err) {
      const gone = (err as NodeJS.ErrnoException).code === 'ENOENT';
      const api = err instanceof ApiError;
      if (!gone && (!api || err.status === 429 || err.status === 503 || err.kind !== 'http'))
        s.move(r.id, 'queued', 'queued', {
          error: waitingMessage(api ? refusedReason(err) : (err as Error).message),
          nextPollAt: Date.now() + 5000,
        });
      else
        s.move(r.id, 'queued', 'failed', {
          error: `An image could not be uploaded: ${api ? err.describe() : (err as Error).message}. Nothing was paid for.`,
        });
      return;
    }
    if (!s.move(r.id, 'queued', 'submitting', { attemptId: randomUUID(), error: null, submittedAt: Date.now() }))
      return;
    this.opts.onChange?.();
    let answer: unknown;
    try {
      answer = await this.opts.client.create(TRAINING_PATH[r.kind], { ...r.body, images });
    } catch (err) {
      return this.onCreateError(r, err);
    }
    const data = (answer as { data?: { task_id?: unknown; status?: unknown } } | null)?.data;
    s.move(r.id, 'submitting', 'training', {
      taskId: typeof data?.task_id === 'string' ? data.task_id : null,
      trainingStatus: typeof data?.status === 'string' ? data.status.toLowerCase() : null,
      nextPollAt: Date.now() + this.firstMs,
    });
  }

  private onCreateError(r: TrainingRow, err: unknown): void {
    const s = this.opts.store;
    const failure = createFailure(err);
    if (failure === 'wait' && err instanceof ApiError)
      s.move(r.id, 'submitting', 'queued', {
        error: waitingMessage(refusedReason(err)),
        nextPollAt: Date.now() + 2000,
      });
    else if (failure === 'refused' && err instanceof ApiError)
      s.move(r.id, 'submitting', 'failed', { error: err.describe() });
    else
      s.move(r.id, 'submitting', 'needs_attention', {
        error: ATTENTION.ambiguousCreate(err instanceof ApiError ? apiProblem(err) : String(err)).replace(
          'task',
          'training',
        ),
      });
  }

  /** This training's LoRA in the catalogue's customs, by its name (the service's identifier for it). */
  private async listed(r: TrainingRow) {
    const groups = loraGroups(await this.opts.client.get<unknown>('/v1/ai/loras'));
    return groups.customs.find((l) => l.name === r.name && (!l.type || l.type === r.kind)) ?? null;
  }

  /** A training left `submitting` by a process that stopped: followed if the catalogue lists it, else the user decides. */
  private async reconcile(r: TrainingRow): Promise<void> {
    let lora;
    try {
      lora = await this.listed(r);
    } catch {
      return; // Asked again when this process next takes the queue; the row stays as it is.
    }
    if (lora)
      this.opts.store.move(r.id, 'submitting', 'training', {
        loraId: lora.id,
        error: null,
        nextPollAt: Date.now(),
      });
    else
      this.opts.store.move(r.id, 'submitting', 'needs_attention', {
        error: ATTENTION.interruptedSubmit.replace(/task/g, 'training'),
      });
  }

  private async follow(r: TrainingRow): Promise<void> {
    if (r.backend !== null && r.backend !== (await this.opts.backend())) return;
    const s = this.opts.store;
    const age = Date.now() - (r.submittedAt ?? Date.now());
    const next = Date.now() + Math.min(15_000, Math.max(this.minMs, age / 4));
    let lora;
    try {
      lora = await this.listed(r);
    } catch (err) {
      s.move(r.id, 'training', 'training', { nextPollAt: Date.now() + 15_000, error: waitingMessage(String(err)) });
      return;
    }
    const status = String((lora?.training as { status?: unknown } | undefined)?.status ?? '').toLowerCase();
    if (lora && status === 'completed')
      s.move(r.id, 'training', 'done', { loraId: lora.id, trainingStatus: status, error: null });
    else if (lora && status === 'failed')
      s.move(r.id, 'training', 'failed', {
        loraId: lora.id,
        trainingStatus: status,
        error: 'The training failed on the server.',
      });
    else
      s.move(r.id, 'training', 'training', {
        loraId: lora?.id ?? null,
        trainingStatus: lora ? status || null : r.trainingStatus,
        nextPollAt: next,
        error: lora ? null : 'Not in the LoRA catalogue yet; asked again shortly.',
      });
  }
}
