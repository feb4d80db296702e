import type { InvalidParam } from '../../../shared/catalogue/index.ts';
import type { BatchCheckResult } from '../../../shared/contract/index.ts';
import { DeskError } from '../../../shared/contract/errors.ts';
import { call, errorText, on } from './bridge.ts';

/**
 * This window's checks: one id, so the core stops the older check when a newer selection is
 * checked; another window's (or tab's) checks have their own.
 */
const CHECK_ID = `studio-${crypto.randomUUID()}`;

/** What the engine says a Start would do with these inputs, asked as soon as they are chosen (batches.check). */
export interface CheckedInputs {
  tool: string;
  inputs: string[];
  outDir?: string;
  params?: Record<string, unknown>;
}

/**
 * The Studio's pre-Start check: how many inputs are ready and which will be skipped, and why, so
 * the count a user starts (and pays) by is the batch's own. A newer selection supersedes the older
 * check: its answer, and its progress, are dropped.
 */
export class InputCheck {
  result = $state<BatchCheckResult | null>(null);
  checking = $state(false);
  /** Files inspected so far, while a check of many runs. */
  progress = $state<{ checked: number; total: number } | null>(null);
  error = $state('');
  /** Parameters the check refused, each naming its field (shown beside it, as a Start's refusal is). */
  invalid = $state<InvalidParam[]>([]);
  private asked = '';
  private seq = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private listening = false;

  /** Checks these inputs unless they are what the last check was for; a burst (typing a folder) is checked once it settles. */
  run(what: CheckedInputs): void {
    const key = JSON.stringify(what);
    if (key === this.asked) return;
    this.asked = key;
    const n = ++this.seq;
    clearTimeout(this.timer);
    this.result = null;
    this.error = '';
    this.invalid = [];
    this.progress = null;
    this.checking = what.inputs.length > 0;
    if (!this.checking) return;
    this.listen();
    this.timer = setTimeout(() => {
      call('batches.check', { ...what, checkId: CHECK_ID }).then(
        (r) => n === this.seq && ((this.result = r), (this.checking = false)),
        (err: unknown) => {
          if (n !== this.seq) return;
          this.error = errorText(err);
          this.invalid = err instanceof DeskError && err.code === 'invalid' ? (err.invalid ?? []) : [];
          this.checking = false;
        },
      );
    }, 150);
  }

  /** Checks the same inputs again (after a Start, what was ready is queued now). */
  again(): void {
    const what = this.asked ? (JSON.parse(this.asked) as CheckedInputs) : null;
    this.asked = '';
    if (what) this.run(what);
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    on('batches.checkProgress', (p) => {
      if (p.checkId === CHECK_ID && this.checking) this.progress = { checked: p.checked, total: p.total };
    });
  }
}
