import type { Engine } from '../../core/engine/engine.ts';
import { SETTLED_STATES, type JobState } from '../../../shared/contract/jobs.ts';
import { waitingReason } from '../../core/queue/job-messages.ts';
import { oneLine, type CliContext } from './command.ts';
import { backendLabel } from '../../../shared/contract/foundation.ts';
import { heldMessage, QUEUE_HELD_BACK, type CapHold } from '../../../shared/contract/jobs.ts';
import { batchWorkState, NO_ANSWER, WORK_STATE_LABEL, workLine } from '../../../shared/work-status.ts';
import { openCliServices, type CliServices } from './services.ts';
import type { Settings } from '../../../shared/settings.ts';

export interface EngineSession {
  engine: Engine;
  services: CliServices;
  close(): Promise<void>;
}

/**
 * The engine of the core the CLI opens (the same database, settings, backend and log as the desktop
 * app): one engine per process. `concurrency` and `settings` (the command's flags) apply to the queue alone.
 */
export async function openEngineSession(
  ctx: CliContext,
  options: { concurrency?: number; settings?: Partial<Settings> } = {},
): Promise<EngineSession> {
  const { concurrency, settings } = options;
  const services = await openCliServices(ctx, { ...settings, ...(concurrency === undefined ? {} : { concurrency }) });
  return { engine: services.core.engine, services, close: () => services.close() };
}

export type Counts = Record<JobState, number>;

/**
 * The states of `ids`, and why the queued ones wait when a create was refused: the reason the
 * engine left on one of them (waitingReason), null when none was.
 */
export function countStates(engine: Engine, ids: readonly string[]): Counts & { waiting: string | null } {
  const counts = {
    queued: 0,
    submitting: 0,
    running: 0,
    downloading: 0,
    done: 0,
    failed: 0,
    canceled: 0,
    needs_attention: 0,
    waiting: null,
  } as Counts & { waiting: string | null };
  for (const group of engine.stateCounts(ids)) {
    counts[group.state] += group.n;
    if (group.state === 'queued') counts.waiting = waitingReason(group.error) ?? counts.waiting;
  }
  return counts;
}

export const settledOf = (c: Counts) => SETTLED_STATES.reduce((a, s) => a + c[s], 0);

/**
 * Progress on stderr, so `files=$(mediadesk run …)` gets the results alone: a bar redrawn in place
 * at a terminal, plain lines on change into a pipe, a file or TERM=dumb (which would print the codes).
 */
export class Progress {
  private readonly out: CliContext['stderr'];
  private readonly redraw: boolean;
  private last = '';
  private lastAt = 0;
  constructor(ctx: Pick<CliContext, 'stderr' | 'env'>) {
    this.out = ctx.stderr;
    this.redraw = Boolean(ctx.stderr.isTTY) && ctx.env.TERM !== 'dumb';
  }

  update(c: Counts, total: number, rawNote = ''): void {
    // The note may quote the server (why a create was refused): escaped, it cannot break the bar's line.
    const note = oneLine(rawNote);
    const settled = settledOf(c);
    const parts = [
      `${c.done} done`,
      c.failed && `${c.failed} failed`,
      c.needs_attention && `${c.needs_attention} need attention`,
      c.canceled && `${c.canceled} canceled`,
      `${c.submitting + c.running} in flight`,
      c.downloading && `${c.downloading} downloading`,
      c.queued && `${c.queued} queued`,
    ]
      .filter(Boolean)
      .join(', ');
    if (this.redraw) {
      const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 60));
      const filled = total ? Math.round((settled / total) * width) : width;
      this.out.write(
        `\r\u001b[2K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${settled}/${total} ${parts}${note ? ` (${note})` : ''}`,
      );
      return;
    }
    const line = `progress ${settled}/${total}: ${parts}${note ? ` (${note})` : ''}`;
    const now = Date.now();
    if (line !== this.last && (now - this.lastAt >= 1000 || settled === total)) {
      this.out.write(line + '\n');
      this.last = line;
      this.lastAt = now;
    }
  }

  end(): void {
    if (this.redraw) this.out.write('\n');
  }
}

/**
 * When another process holds the queue on another backend than `mine`: it runs only its own
 * backend's work, so say why ours waits, or the wait looks like a hang. Null otherwise.
 */
export function otherBackendNote(engine: Engine, mine: string | null, what: string): string | null {
  const theirs = !engine.holdsQueue ? engine.holderBackend() : null;
  if (!theirs || !mine || theirs === mine) return null;
  return `another MediaDesk process runs the queue on ${backendLabel(theirs)}; ${what} for ${backendLabel(mine)} and wait${what.startsWith('these') ? '' : 's'} until it switches or quits`;
}

/** Why the queue is not moving, for the progress line; '' when nothing holds it. */
function queueNote(
  otherHolds: boolean,
  paused: boolean,
  waiting: string | null,
  serviceWait: string | null,
  capHolds: CapHold[],
): string {
  if (otherHolds) return 'another MediaDesk process is running the queue';
  if (paused) return 'queue paused';
  if (capHolds.length) return capHolds.map(heldMessage).join(' ');
  if (waiting) return `waiting to submit again: ${waiting}`;
  // A server that has not answered yet, or one that cannot be reached (not "rate limited").
  if (serviceWait === NO_ANSWER) return workLine({ kind: 'waiting', label: WORK_STATE_LABEL.waiting, why: NO_ANSWER });
  return serviceWait ? QUEUE_HELD_BACK : '';
}

/**
 * Why the followed batch does not move, when it is held (its budget, a daily cap), in the words of
 * the Studio and the Queue, with what lifts the hold; null while it is not held.
 */
export function batchHoldNote(engine: Engine, batchId: string | undefined): string | null {
  const batch = batchId ? engine.store.batch(batchId) : null;
  const state = batch ? batchWorkState(batch, engine.status()) : null;
  if (state?.kind === 'budget')
    return `${workLine(state)} Raise or remove it with \`mediadesk jobs budget ${batchId!.slice(0, 8)}\` (running the same command again does not).`;
  if (state?.kind === 'capped') return `${workLine(state)} It goes on by itself while a queue runs.`;
  return null;
}

/** Drives (or follows) the queue until every one of `ids` is settled. */
export async function waitForJobs(
  engine: Engine,
  ids: readonly string[],
  progress: Progress,
  signal: AbortSignal,
  /** The batch followed: its budget's hold is said while it lasts. */
  batchId?: string,
): Promise<Counts> {
  let counts = countStates(engine, ids);
  let note = '';
  const mine = await engine.identity();
  while (settledOf(counts) < ids.length && !signal.aborted) {
    const st = engine.status();
    const other = engine.otherHolds();
    note =
      batchHoldNote(engine, batchId) ??
      otherBackendNote(engine, mine, 'these jobs are') ??
      queueNote(other, st.paused, counts.waiting, st.serviceWait, st.capHolds);
    // Work goes on without the team server: said beside whatever else holds it.
    if (st.teamNote) note = note ? `${st.teamNote} ${note}` : st.teamNote;
    progress.update(counts, ids.length, note);
    await new Promise((r) => setTimeout(r, 200));
    counts = countStates(engine, ids);
  }
  // The last line keeps why it stopped moving (a --timeout or Ctrl-C during a hold), not only the counts.
  progress.update(counts, ids.length, settledOf(counts) < ids.length ? note : '');
  progress.end();
  return counts;
}
