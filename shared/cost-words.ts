import type { CostEstimate } from './contract/jobs.ts';
import { formatTime } from './dates.ts';

/** Days of the team's usage a tool's price is learned from. */
export const LEARNED_PRICE_DAYS = 7;

/** A number of credits as people read it: whole when it is, else one decimal. */
export const creditFigure = (n: number): string =>
  Number.isInteger(n) ? n.toLocaleString('en-US') : (Math.round(n * 10) / 10).toLocaleString('en-US');

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** Why a learned price is what it is, in words (the batch's stored basis). */
export function learnedBasis(each: number, uses: number, days = LEARNED_PRICE_DAYS): string {
  return `about ${creditFigure(each)} credits each, from your team's use of this tool in the last ${days} days (${plural(uses, 'use')})`;
}

export const COST_UNKNOWN = {
  forbidden: "cost unknown: this key cannot read the team's usage",
  unused: (days = LEARNED_PRICE_DAYS) => `cost unknown: your team has not used this tool in the last ${days} days`,
  unreadable: (why: string) => `cost unknown: the team's usage could not be read (${why})`,
  app: 'cost unknown: the server will charge what this app costs',
};

/**
 * The estimate in one line, the same in the app and the CLI: "Sends 11 paid jobs · about 220
 * credits (20 each, from your team's use in the last 7 days) · leaves 189 of today's 200 for
 * Precision upscaler".
 */
/** ", at ×4 (4 times the area of ×2)": a learned price scaled by output area, said with its factor. */
function areaWords(scale: { from: number; to: number } | undefined): string {
  if (!scale || scale.from === scale.to) return '';
  const times = (scale.to / scale.from) ** 2;
  return ` at ×${scale.to} (${creditFigure(times)} times the area of ×${scale.from})`;
}

export function costSentence(e: CostEstimate, unit = 'job'): string {
  const parts = [`Sends ${plural(e.creates, `paid ${unit}`)}`];
  if (e.credits === null) parts.push(e.basis);
  else if (e.learnedFrom)
    parts.push(
      `about ${plural(Math.round(e.credits), 'credit')} (${creditFigure(e.creditsEach ?? 0)} each${areaWords(e.learnedFrom.areaScale)}, from your team's use in the last ${e.learnedFrom.days} days)`,
    );
  else parts.push(`${plural(e.credits, 'credit')} (${e.basis})`);
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
