import type { CostEstimate } from './contract/jobs.ts';
import { formatTime } from './dates.ts';

/** A number of credits as people read it: whole when it is, else one decimal. */
export const creditFigure = (n: number): string =>
  Number.isInteger(n) ? n.toLocaleString('en-US') : (Math.round(n * 10) / 10).toLocaleString('en-US');

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

export const COST_UNKNOWN = {
  app: 'cost unknown: the server will charge what this app costs',
};

/**
 * The estimate in one line, the same in the app and the CLI: "Sends 11 paid jobs · 55 credits (5
 * credits each, by the service's price …) · leaves 1,239 of today's 1,250 for Precision upscaler".
 */
export function costSentence(e: CostEstimate, unit = 'job'): string {
  const parts = [`Sends ${plural(e.creates, `paid ${unit}`)}`];
  if (e.credits === null) parts.push(e.basis);
  else parts.push(`${plural(Math.round(e.credits * 100) / 100, 'credit')} (${e.basis})`);
  if (e.cap) {
    const { limit, left } = e.cap;
    parts.push(
      e.creates <= left
        ? `leaves ${(left - e.creates).toLocaleString('en-US')} of today's ${limit.toLocaleString('en-US')} for ${e.title}`
        : `only ${left.toLocaleString('en-US')} of today's ${limit.toLocaleString('en-US')} for ${e.title} are left: the rest wait until ${formatTime(e.cap.resetsAt, { utc: true })} UTC`,
    );
  }
  return parts.join(' · ');
}

/** A workflow app's runs: its own price (total_cost) times the runs. */
export function appRunEstimate(name: string, cost: number | null, runs = 1): CostEstimate {
  return {
    title: name,
    creates: runs,
    cap: null,
    credits: cost === null ? null : cost * runs,
    creditsEach: cost,
    learnedFrom: null,
    basis: cost === null ? COST_UNKNOWN.app : `the app's price: ${plural(cost, 'credit')} a run`,
  };
}

/** Why a batch waits for its budget (batches.held_by), said in the Queue and the CLI. */
export const BUDGET_HELD = {
  credits: (budget: number, spent: number) =>
    `Paused: the next job would go past this batch's budget of ${plural(budget, 'credit')} (${creditFigure(spent)} spent so far by the estimate).`,
  jobs: (budget: number) => `Paused: this batch's budget of ${plural(budget, 'job')} is used.`,
};
