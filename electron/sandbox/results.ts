import { statSync } from 'node:fs';
import sharp from 'sharp';
import type { ResultKind } from '../../shared/official/index.ts';
import type { DiskStore } from './blob-store.ts';
import { bufferSource, fileSource, type ByteSource } from './download.ts';
import { AUDIO_ASSET, imageFormatOf, renderImage, VIDEO_ASSET, type Rendered } from './render.ts';
import type { Task } from './tasks.ts';

/** Result URLs live this long unless the task says otherwise (tools 24 h per the spec, apps 12 h). */
export const DEFAULT_RESULT_TTL_HOURS = 24;
export const APP_RESULT_TTL_HOURS = 12;
/** Rendered results kept in memory (LRU by bytes); anything else is re-rendered on demand. */
export const RESULT_CACHE_BYTES = 64 * 1024 * 1024;
/** Concurrent renders: bounds memory when many clients download 4K results at once. */
const RENDER_CONCURRENCY = 2;

/** When a completed task's result URLs stop working. */
export function resultExpiresAt(task: Task): number {
  const hours = task.ttlHours ?? DEFAULT_RESULT_TTL_HOURS;
  return task.createdAt + task.durationMs + hours * 3_600_000;
}

export function extensionOf(kind: ResultKind, params: Record<string, unknown>): string {
  if (kind === 'video') return params.output_format === 'mov' ? 'mov' : 'mp4';
  if (kind === 'audio') return 'mp3';
  const format = imageFormatOf(params);
  return format === 'jpeg' ? 'jpg' : format;
}

export function resultPath(task: Task, index: number, kind: ResultKind): string {
  return `/results/${task.id}/${index}.${extensionOf(kind, task.params)}`;
}

const ASSETS = {
  video: { path: VIDEO_ASSET, size: statSync(VIDEO_ASSET).size },
  audio: { path: AUDIO_ASSET, size: statSync(AUDIO_ASSET).size },
};

/**
 * `faithful` (default) renders every image result for real; `fast` serves one tiny fixed image per
 * format instead, a benchmark aid so a client's throughput is measured rather than libvips'.
 */
export type RenderMode = 'faithful' | 'fast';

const fastImages = new Map<string, Promise<Rendered>>();
/** The fixed 8x8 image `fast` mode serves for every image result (rendered once per format). */
function fastImage(params: Record<string, unknown>): Promise<Rendered> {
  const format = imageFormatOf(params);
  let p = fastImages.get(format);
  if (!p) {
    const img = sharp({ create: { width: 8, height: 8, channels: 3, background: '#3a6ea5' } });
    p = img
      .toFormat(format)
      .toBuffer()
      .then((bytes) => ({ bytes, contentType: `image/${format}` }));
    fastImages.set(format, p);
  }
  return p;
}

/** Every client that wanted a result went away before its render started: it was not rendered. */
export class RenderAbandonedError extends Error {
  override name = 'RenderAbandonedError';
}

interface InflightRender {
  promise: Promise<Rendered>;
  /** Requests still waiting for it; at 0 a render not yet started is dropped from the queue. */
  wanted: number;
  ac: AbortController;
}

interface Waiter {
  start: () => void;
}

export interface RenderStats {
  done: number;
  abandoned: number;
  running: number;
  queued: number;
}

export class ResultRenderer {
  private cache = new Map<string, Rendered>();
  private cachedBytes = 0;
  private inflight = new Map<string, InflightRender>();
  private running = 0;
  private waiting: Waiter[] = [];
  private done = 0;
  private abandoned = 0;
  private readonly disk: DiskStore;
  private readonly mode: RenderMode;

  constructor(disk: DiskStore, mode: RenderMode = 'faithful') {
    this.disk = disk;
    this.mode = mode;
  }

  /** Renders done and abandoned, and the render queue now (GET /__sandbox/stats). */
  stats(): RenderStats {
    return { done: this.done, abandoned: this.abandoned, running: this.running, queued: this.waiting.length };
  }

  /**
   * The bytes of result `index` of a completed task. `signal`: the request went away; if nobody
   * else waits for the same result, its render leaves the queue (RenderAbandonedError).
   */
  async source(task: Task, index: number, kind: ResultKind, signal?: AbortSignal): Promise<ByteSource> {
    if (kind === 'video')
      return fileSource(
        ASSETS.video.path,
        ASSETS.video.size,
        task.params.output_format === 'mov' ? 'video/quicktime' : 'video/mp4',
      );
    if (kind === 'audio') return fileSource(ASSETS.audio.path, ASSETS.audio.size, 'audio/mpeg');
    const key = `${task.id}/${index}`;
    if (this.mode === 'fast') {
      const f = await fastImage(task.params);
      return bufferSource(f.bytes, f.contentType, `"${key}"`);
    }
    const r = await this.rendered(
      key,
      () =>
        renderImage(
          task.toolId.startsWith('app:') ? 'app' : task.toolId,
          task.id,
          task.params,
          index,
          this.disk,
          task.inputImage,
        ),
      signal,
    );
    return bufferSource(r.bytes, r.contentType, `"${key}"`);
  }

  private async rendered(key: string, render: () => Promise<Rendered>, signal?: AbortSignal): Promise<Rendered> {
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    if (signal?.aborted) throw new RenderAbandonedError('the request went away');
    let entry = this.inflight.get(key);
    if (!entry) {
      const ac = new AbortController();
      const promise = this.limited(render, ac.signal)
        .then((r) => {
          this.done++;
          this.remember(key, r);
          return r;
        })
        .finally(() => this.inflight.delete(key));
      entry = { promise, wanted: 0, ac };
      this.inflight.set(key, entry);
    }
    const e = entry;
    e.wanted++;
    signal?.addEventListener(
      'abort',
      () => {
        if (--e.wanted === 0) e.ac.abort();
      },
      { once: true },
    );
    return e.promise;
  }

  private remember(key: string, r: Rendered): void {
    if (r.bytes.length > RESULT_CACHE_BYTES / 4) return;
    const old = this.cache.get(key);
    if (old) this.cachedBytes -= old.bytes.length;
    this.cache.set(key, r);
    this.cachedBytes += r.bytes.length;
    for (const [k, v] of this.cache) {
      if (this.cachedBytes <= RESULT_CACHE_BYTES) break;
      this.cache.delete(k);
      this.cachedBytes -= v.bytes.length;
    }
  }

  /**
   * At most RENDER_CONCURRENCY renders at a time, first come first served: a finished render hands
   * its slot straight to the oldest waiter (a newcomer can never overtake it), and a waiter whose
   * clients all went away leaves the queue instead of rendering for nobody.
   */
  private async limited<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.running >= RENDER_CONCURRENCY) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          this.abandoned++;
          reject(new RenderAbandonedError('every request for this result went away'));
        };
        const w: Waiter = {
          start: () => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(w);
      });
      // The slot was handed over by the render that finished: `running` already counts it.
    } else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running--;
    }
  }
}
