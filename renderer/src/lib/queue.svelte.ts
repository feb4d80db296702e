import { SvelteMap } from 'svelte/reactivity';
import type { BatchRecord, JobRecord, QueueStatus } from '../../../shared/contract/index.ts';
import { call, on, onResume, errorText } from './bridge.ts';
import { title } from './title.svelte.ts';
import { endedParts, tally } from './batch-tally.ts';
import { workProgress } from '../../../shared/work-progress.ts';
import { workState, workTitle } from '../../../shared/work-status.ts';

/**
 * The live queue, shared by Studio, Queue and Results: one subscription to `jobs.changed` for
 * the whole renderer, so every screen shows the same numbers and nothing polls.
 */
class QueueStore {
  batches = new SvelteMap<string, BatchRecord>();
  /** Jobs by batch, loaded on demand (a batch can hold thousands). */
  jobs = new SvelteMap<string, SvelteMap<string, JobRecord>>();
  status = $state<QueueStatus | null>(null);
  error = $state('');
  /**
   * The batch (and job) another screen or a mediadesk:// link sends the user to ("See why in the
   * Queue"): the Queue opens on it once, or moves to it when already open.
   */
  focus = $state<{ batchId: string; jobId: string | null } | null>(null);

  showNext(batchId: string, jobId: string | null = null): void {
    this.focus = { batchId, jobId };
  }

  takeFocus(): { batchId: string; jobId: string | null } | null {
    const f = this.focus;
    this.focus = null;
    return f;
  }

  /** Jobs that wait for a decision, across every batch: the Queue's menu item shows the count. */
  needsYou = $derived(this.status?.counts.needs_attention ?? 0);
  /** Batches started in this window or seen moving since it opened: those drive the page title. */
  private watched = new Set<string>();
  private started = false;
  private loading = new Map<string, Promise<void>>();
  /** Each job's place in jobs.list, which answers in queue order (the folder walk's order). */
  private order = new Map<string, number>();

  /** Newest first, as batches.list answers. */
  sorted = $derived([...this.batches.values()].sort((a, b) => b.createdAt - a.createdAt));

  start() {
    if (this.started) return;
    this.started = true;
    on('jobs.changed', (e) => {
      this.status = e.status;
      for (const b of e.batches) {
        this.batches.set(b.id, b);
        // Started elsewhere (a hot folder, the CLI), it runs now all the same.
        if (!b.finished) this.watched.add(b.id);
      }
      if (e.truncated) {
        for (const id of this.jobs.keys()) void this.loadJobs(id, true);
      } else {
        for (const j of e.jobs) this.jobs.get(j.batchId)?.set(j.id, j);
      }
      this.updateTitle();
    });
    // Changes made while the host was away were never sent: everything shown is asked for again.
    onResume(() => {
      void this.refresh();
      for (const id of this.jobs.keys()) void this.loadJobs(id, true);
    });
    void this.refresh();
  }

  async refresh() {
    try {
      const [list, status] = await Promise.all([call('batches.list', { limit: 500 }), call('jobs.status', {})]);
      for (const b of list) this.batches.set(b.id, b);
      this.status = status;
      this.error = '';
      for (const id of this.jobs.keys()) await this.loadJobs(id, true);
    } catch (err) {
      this.error = errorText(err);
    }
  }

  /** Loads every job of a batch once (pages of 1000); later changes arrive by event. */
  loadJobs(batchId: string, force = false): Promise<void> {
    if (!force && this.jobs.has(batchId)) return this.loading.get(batchId) ?? Promise.resolve();
    const p = (async () => {
      const map = this.jobs.get(batchId) ?? new SvelteMap<string, JobRecord>();
      if (!this.jobs.has(batchId)) this.jobs.set(batchId, map);
      for (let offset = 0; ; offset += 1000) {
        const page = await call('jobs.list', { batchId, limit: 1000, offset });
        page.jobs.forEach((j, i) => {
          this.order.set(j.id, offset + i);
          map.set(j.id, j);
        });
        if (offset + page.jobs.length >= page.total || page.jobs.length === 0) break;
      }
    })().catch((err) => {
      this.error = errorText(err);
    });
    this.loading.set(batchId, p);
    return p;
  }

  jobsOf(batchId: string): JobRecord[] {
    const m = this.jobs.get(batchId);
    // The server's order, not createdAt: a batch's jobs share one creation time, so that fell back
    // to their random ids. A job seen only by event yet goes last until the next load.
    const at = (j: JobRecord) => this.order.get(j.id) ?? Infinity;
    return m
      ? [...m.values()].sort((a, b) => at(a) - at(b) || a.createdAt - b.createdAt || a.id.localeCompare(b.id))
      : [];
  }

  watch(batch: BatchRecord) {
    this.batches.set(batch.id, batch);
    this.watched.add(batch.id);
    this.updateTitle();
  }

  private updateTitle() {
    const mine = [...this.watched].map((id) => this.batches.get(id)).filter((b): b is BatchRecord => !!b);
    if (mine.length === 0) return;
    const running = workProgress(mine);
    const state = workState(mine, this.status);
    if (running && state) {
      title.set(workTitle(state, running));
    } else {
      // "done" only when every job is: a batch canceled part-way says what it came to.
      const canceled = mine.some((b) => tally(b).canceled > 0);
      const failed = mine.reduce((n, b) => n + tally(b).failed + tally(b).needs, 0);
      if (canceled)
        title.set(
          `batch ended: ${mine.length === 1 ? endedParts(mine[0]).join(', ') : `${mine.reduce((n, b) => n + tally(b).done, 0)} done`}`,
        );
      else title.set(failed ? `batch done, ${failed} need a look` : 'batch done');
    }
  }
}

export const queue = new QueueStore();
