/**
 * What a job says when it did not simply finish: stored with the job, shown as they are by the
 * Queue's job detail and by `mediadesk jobs` / `mediadesk run`, so each is worded once, here.
 * Each names what happened, whether it was charged, and what the user can do.
 */
export const ATTENTION = {
  interruptedSubmit:
    'The app stopped while this task was being submitted; it may have been created and charged. Check recent creations, then Retry to submit again or Cancel.',
  ambiguousCreate: (detail: string) =>
    `The submission failed after it may have reached the server: ${detail.replace(/\.$/, '')}. The task may have been created and charged. Check recent creations, then Retry to submit again or Cancel.`,
  lostTask:
    'The server no longer knows this task; its result cannot be fetched. Retry submits it again (a new paid task).',
  canceledMaybeSent:
    'Canceled after its submission may have reached the server: the task may have been created and charged. Check recent creations, then Retry to submit it again or Cancel.',
} as const;

const WAITING = 'Waiting: ';
const WAITING_END = '. It is sent again by itself; nothing was charged.';

/** A queued job whose create the server provably did not take (busy, unreachable). */
export const waitingMessage = (reason: string) => `${WAITING}${reason}${WAITING_END}`;

/** The reason of a waitingMessage, null for any other message. */
export function waitingReason(error: string | null): string | null {
  if (!error?.startsWith(WAITING)) return null;
  return error.endsWith(WAITING_END) ? error.slice(WAITING.length, -WAITING_END.length) : error.slice(WAITING.length);
}

/**
 * A job whose task was in a built-in Sandbox that has ended with the app or command that started
 * it (JobStore.requeueGoneSandbox): queued, not running, and free to send again.
 */
export const SANDBOX_GONE =
  'Queued again: the built-in Sandbox that had its task stopped with the app or command that started it. It is sent again to the Sandbox by itself when the queue next runs (the app, or `mediadesk run` over its input); the Sandbox is free.';

/**
 * SANDBOX_GONE for a workflow-app run (AppRunStore.requeueGoneSandbox). The apps runner of the
 * next process to hold the queue on the Sandbox sends it again (AppRunner.tick).
 */
export const RUN_SANDBOX_GONE =
  'Queued again: the built-in Sandbox that had this run stopped with the app or command that started it. It is sent again to the Sandbox by itself, as a new run, when the queue next runs on the Sandbox (the app, or the same `mediadesk apps run` again, which follows it); the Sandbox is free.';

/** The server ran the task and it failed: nothing to download, only a new task can help. */
export const taskFailed = (serverError?: string | null) =>
  serverError
    ? `The task failed on the server: ${serverError.replace(/\.$/, '')}. Retry submits it again (a new task).`
    : 'The task failed on the server (nothing to download). Retry submits it again (a new task).';

/** The task is done (and paid) but its result did not reach the output folder. */
export const downloadFailed = (reason: string) =>
  `Download failed: ${reason.replace(/\.$/, '')}. The task is paid; Retry downloads it again without a new charge.`;

/**
 * The user canceled the job. `maybe`: its create was sent but no answer came (a job that needs
 * you, or one canceled mid-submission), so the server may have made the task: not "before submission".
 */
const CANCELED = {
  maybe:
    'Canceled; its submission may have reached the server, so the task may have been created and charged. Check recent creations before you retry it.',
  yes: 'Canceled; the task was already submitted and may still be charged.',
  no: 'Canceled before submission.',
};
export function canceledMessage(submitted: boolean | 'maybe'): string {
  if (submitted === 'maybe') return CANCELED.maybe;
  return submitted ? CANCELED.yes : CANCELED.no;
}

const REFUSED: Record<number, string> = {
  429: "the server's rate limit was reached",
  503: 'the server is unavailable for now',
};

/** Why a create the server did not take waits: the server's words kept, after what they mean. */
export function refusedReason(err: { status?: number; describe(): string }): string {
  const described = err.describe().replace(/\.$/, '');
  return err.status ? `${REFUSED[err.status] ?? 'the server refused it for now'} (HTTP ${described})` : described;
}

/**
 * Why the whole queue waits, in a few words (the Queue says it once as the wait starts): what a
 * refused create or an upload that failed for now met; `err` is null for a failure that is no API
 * error (an input that could not be read for now).
 */
export function heldBackReason(err: { status?: number; kind?: string } | null): string {
  if (err?.status) return REFUSED[err.status] ?? 'the server refused new tasks for now';
  if (err?.kind === 'timeout') return 'the server did not answer in time';
  return err ? 'the server could not be reached' : 'an input could not be sent for now';
}

/** An input that went bad between queuing and sending (deleted, changed): nothing was sent. */
export const inputGoneBad = (path: string, problem: string) =>
  `The input ${path} ${problem}; nothing was sent or paid. Restore or fix the file, then Retry (or Cancel the job).`;

/** The upload of a local input the server turned down for good (a 4xx): no task was created. */
export const uploadRefused = (path: string, err: { describe(): string }) =>
  `The server refused the upload of the input ${path} (HTTP ${err.describe().replace(/\.$/, '')}); no task was created and nothing was paid. Fix or replace the file, then Retry (or Cancel the job).`;

/** What the API said, for a message about a create: the status said as one. */
export const apiProblem = (err: { status?: number; describe(): string }) =>
  err.status ? `the server answered HTTP ${err.describe()}` : err.describe();

const KEY_NEXT = 'Check the API key (Settings, or `mediadesk key`), then Retry.';
const REFUSED_NEXT: Record<number, string> = {
  401: KEY_NEXT,
  403: KEY_NEXT,
  402: 'Add credits to the account, then Retry.',
};

/** A create the server turned down (4xx): nothing was paid; what can change the answer. */
export function createRefused(err: { status?: number; invalidParams: readonly unknown[]; describe(): string }): string {
  const next =
    REFUSED_NEXT[err.status ?? 0] ??
    (err.invalidParams.length ? 'Start a new batch with the settings it named corrected.' : 'Retry sends it again.');
  return `The server refused the task (HTTP ${err.describe().replace(/\.$/, '')}); nothing was paid. ${next}`;
}
