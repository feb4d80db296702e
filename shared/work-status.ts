import { heldMessage, type BatchRecord, type QueueStatus } from './contract/jobs.ts';
import { progressWords, workProgress, type WorkProgress } from './work-progress.ts';

/**
 * What unfinished work is doing, defined once and said the same way by the Studio, the Queue, the
 * tab title, notifications and the CLI: a batch that waits for the service, one its budget
 * paused, one held at a daily cap and one that runs are different things to the person waiting.
 */
export const WORK_STATES = ['running', 'waiting', 'budget', 'capped', 'paused'] as const;
export type WorkStateKind = (typeof WORK_STATES)[number];

export const WORK_STATE_LABEL: Record<WorkStateKind, string> = {
  running: 'Running',
  waiting: 'Waiting for the service',
  budget: 'Paused by budget',
  capped: 'Held by a daily cap',
  paused: 'Paused',
};

export interface WorkState {
  kind: WorkStateKind;
  /** WORK_STATE_LABEL of the kind. */
  label: string;
  /** Why, in plain words (the server's silence, the budget, the cap); null while it runs. */
  why: string | null;
}

/** How long a request may go unanswered before the work is said to wait for the service (as Test connection). */
export const NO_ANSWER_MS = 10_000;
/** QueueStatus.serviceWait while a request has gone unanswered for NO_ANSWER_MS. */
export const NO_ANSWER = `the service has not answered for over ${NO_ANSWER_MS / 1000} s`;

const state = (kind: WorkStateKind, why: string | null = null): WorkState => ({
  kind,
  label: WORK_STATE_LABEL[kind],
  why,
});

type BatchPart = Pick<BatchRecord, 'finished' | 'budgetHold' | 'counts' | 'tool'>;
type StatusPart = Pick<QueueStatus, 'paused' | 'serviceWait' | 'capHolds'>;

/** A batch's state; null once it is finished. A hold comes before "waiting": it does not end by itself. */
export function batchWorkState(b: BatchPart, status: StatusPart | null): WorkState | null {
  if (b.finished) return null;
  const queued = b.counts.queued ?? 0;
  if (status?.paused) return state('paused', 'the queue is paused; Resume queue goes on');
  // The hold's own words without their lead ("Paused: ", "Held: "): the label says that.
  if (b.budgetHold && queued > 0) return state('budget', b.budgetHold.replace(/^Paused: /, ''));
  const cap = queued > 0 ? status?.capHolds.find((h) => h.tool === b.tool) : undefined;
  if (cap) return state('capped', heldMessage(cap).replace(/^Held: /, ''));
  if (status?.serviceWait && queued + (b.counts.submitting ?? 0) > 0) return state('waiting', status.serviceWait);
  return state('running');
}

/**
 * The state of several batches at once (the tab title, the Queue's header, the tray): running
 * while any runs, else the first hold met (a pause of the queue before all), null when none is unfinished.
 */
export function workState(batches: Iterable<BatchPart>, status: StatusPart | null): WorkState | null {
  let held: WorkState | null = null;
  for (const b of batches) {
    const s = batchWorkState(b, status);
    if (!s) continue;
    if (s.kind === 'running') return s;
    held ??= s;
  }
  return held;
}

/** The tab title's status: "3/20" while it runs, "Paused by budget 15/18" when held. */
export function workTitle(s: WorkState, p: WorkProgress): string {
  const counted = `${p.settled}/${p.total}`;
  return s.kind === 'running' ? counted : `${s.label} ${counted}`;
}

/** One line for a note or a notification: "Paused by budget: why". */
export const workLine = (s: WorkState) => (s.why ? `${s.label}: ${s.why}` : s.label);

type TrayBatch = BatchPart & Pick<BatchRecord, 'total' | 'progress'>;

/** What the tray and the taskbar show while the window is closed, said in the one model's words. */
export interface DesktopWork {
  /** The tray's tooltip: "MediaDesk: Paused by budget: 3 of 20 done", and why on a line of its own. */
  toolTip: string;
  /** The status line of the tray's menu: "3 of 20 done" while it runs, else the state's label before it. */
  status: string;
  /** Why it does not run (WorkState.why), for a second line of the menu; null while it runs. */
  why: string | null;
  toggle: 'Pause queue' | 'Resume queue';
  /** The taskbar/dock bar as Electron's setProgressBar takes it: the fraction settled, or -1 to remove it. */
  bar: { value: number; mode: 'normal' | 'paused' };
  /** Closing the window keeps MediaDesk in the tray while work is left that the person did not pause. */
  keepsRunning: boolean;
}

/** The tray's and the taskbar's view of the batches not finished and the queue's status. */
export function desktopWork(batches: Iterable<TrayBatch>, status: StatusPart): DesktopWork {
  const list = [...batches];
  const p = workProgress(list);
  const s = p ? workState(list, status) : null;
  let line = 'All done';
  if (p && s) line = s.kind === 'running' ? progressWords(p) : `${s.label}: ${progressWords(p)}`;
  const why = s?.kind === 'running' ? null : (s?.why ?? null);
  return {
    toolTip: `MediaDesk: ${line}${why ? `\n${why}` : ''}`,
    status: line,
    why,
    toggle: status.paused ? 'Resume queue' : 'Pause queue',
    bar: !p
      ? { value: -1, mode: 'normal' }
      : { value: p.settled / p.total, mode: s?.kind === 'running' ? 'normal' : 'paused' },
    keepsRunning: s !== null && s.kind !== 'paused',
  };
}
