import type { CostEstimate } from './contract/jobs.ts';
import { formatTime } from './dates.ts';
import { numberText } from './number-text.ts';

/** A number of credits as people read it: whole when it is, else one decimal. */
export const creditFigure = (n: number): string => numberText(Number.isInteger(n) ? n : Math.round(n * 10) / 10);

const plural = (n: number, one: string, many = `${one}s`) => `${numberText(n)} ${n === 1 ? one : many}`;

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
        ? `leaves ${numberText(left - e.creates)} of today's ${numberText(limit)} for ${e.title}`
        : `only ${numberText(left)} of today's ${numberText(limit)} for ${e.title} are left: the rest wait until ${formatTime(e.cap.resetsAt, { utc: true })} UTC`,
    );
  }
  const team = teamWords(e);
  if (team) parts.push(team);
  return parts.join(' · ');
}

/**
 * The whole studio's side of the estimate (a team server is set): spent today, what is left of the
 * team's budget and the project's, and whether this batch would go past either.
 */
export function teamWords(e: CostEstimate): string | null {
  const t = e.team;
  if (!t) return null;
  if (!t.reachable) return `the team server cannot be reached (${t.why}): the studio's spend today is not counted here`;
  const said = [`the studio has spent ${creditFigure(t.spentToday)} credit${t.spentToday === 1 ? '' : 's'} today`];
  if (t.left !== null) said.push(`${creditFigure(t.left)} of the team's ${creditFigure(t.budget!)} a day left`);
  if (t.project) {
    const p = t.project;
    said.push(
      p.left === null
        ? `project "${p.name}" ${creditFigure(p.spentToday)} spent, no budget of its own`
        : `${creditFigure(p.left)} of project "${p.name}"'s ${creditFigure(p.budget!)} a day left`,
    );
  }
  const over = teamOverrun(e);
  if (over)
    said.push(
      `this batch would go past ${over.what}: only ${plural(over.fits, e.creates === 1 ? 'create' : 'job')} fit${over.fits === 1 ? 's' : ''} today, the rest wait until 00:00 UTC or a raised budget`,
    );
  return said.join('; ');
}

/** The budget (team's or project's) this batch's credits would go past, and how many of its creates fit; null when none. */
export function teamOverrun(e: CostEstimate): { what: string; fits: number } | null {
  const t = e.team;
  if (!t?.reachable || e.credits === null || !e.creditsEach) return null;
  const budgets = [
    { left: t.left, what: "the team's budget" },
    ...(t.project ? [{ left: t.project.left, what: `project "${t.project.name}"'s budget` }] : []),
  ].filter((b): b is { left: number; what: string } => b.left !== null && e.credits! > b.left + 1e-9);
  if (!budgets.length) return null;
  const tightest = budgets.reduce((a, b) => (b.left < a.left ? b : a));
  return { what: tightest.what, fits: Math.floor((tightest.left + 1e-9) / e.creditsEach) };
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
