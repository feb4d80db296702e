// A batch's report in words, without zod: the Queue says them without building the contract's schemas
// (report.ts re-exports them).
import { formatDate } from '../dates.ts';
import { numberText } from '../number-text.ts';
import type { BatchReport } from './report.ts';
import type { TeamSpend } from './team-server.ts';

/** Rounded for people ("about 220"); the report keeps the exact figure. */
const credits = (n: number) => `${numberText(Math.round(n))} credit${Math.round(n) === 1 ? '' : 's'}`;

/** The report in one line, as the Queue and the CLI say it: "Sent 11 · 10 made results · 1 charged but failed · …". */
export function reportSummary(r: Pick<BatchReport, 'counts' | 'credits'>): string {
  const c = r.counts;
  const parts = [`Sent ${c.sent}`, `${c.results} made results`];
  if (c.chargedFailed) parts.push(`${c.chargedFailed} charged but failed`);
  if (c.notDownloaded) parts.push(`${c.notDownloaded} charged, results not downloaded`);
  if (c.notCharged) parts.push(`${c.notCharged} refused, not charged`);
  if (c.needsAttention) parts.push(`${c.needsAttention} need${c.needsAttention === 1 ? 's' : ''} you`);
  if (c.running) parts.push(`${c.running} still running`);
  if (c.queued) parts.push(`${c.queued} waiting`);
  if (c.canceled) parts.push(`${c.canceled} canceled`);
  parts.push(r.credits.estimate === null ? 'no estimate' : `estimate ${credits(r.credits.estimate)}`);
  const { actual } = r.credits;
  if (actual === null) parts.push('charges unknown');
  else parts.push(actual === 0 ? 'nothing charged' : `charged about ${credits(actual)}`);
  return parts.join(' · ');
}

/** The charges with their basis: "Charged about 220 credits, by your team's usage of this tool on 27 Nov." */
export function chargesSentence(r: Pick<BatchReport, 'credits'>): string {
  const { actual, actualBasis } = r.credits;
  if (actual === null) return `Charges unknown: ${actualBasis.replace(/^cost unknown: /, '')}.`;
  return actual === 0 ? `Nothing charged: ${actualBasis}.` : `Charged about ${credits(actual)}: ${actualBasis}.`;
}

/** A UTC charge day (`YYYY-MM-DD`) in the one date format. */
const dayWords = (day: string) => formatDate(`${day}T00:00:00Z`, { utc: true });
const listWords = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

/**
 * The reconciliation with what the service reports, said plainly: it reports by category, so its
 * figure holds every use of the team on those days, this batch among them.
 */
export function serviceSentence(r: Pick<BatchReport, 'credits' | 'counts'>): string | null {
  const s = r.credits.service;
  if (!s) return null;
  const on = `on ${listWords(s.days.map(dayWords))}`;
  if (s.credits === null) return `The service's usage ${on} could not be read: ${s.why}.`;
  const cats = s.categories.map((c) => `${c.name} ${credits(c.credits)} in ${c.uses} use${c.uses === 1 ? '' : 's'}`);
  return (
    `The service reports usage by category, not by tool: ${on} your team used ${credits(s.credits)} in ${s.uses} use${s.uses === 1 ? '' : 's'}` +
    `${cats.length ? ` (${cats.join('; ')})` : ''}; this batch's ${r.counts.sent} charged create${r.counts.sent === 1 ? '' : 's'} are part of it.`
  );
}

/** The estimate with its basis, or that none was made. */
export function estimateSentence(r: Pick<BatchReport, 'credits'>): string {
  const { estimate, estimateBasis } = r.credits;
  if (estimate === null) return estimateBasis ? `No estimate: ${estimateBasis}.` : 'No estimate was made before Start.';
  return `Estimated ${credits(estimate)} before Start${estimateBasis ? `, ${estimateBasis}` : ''}.`;
}

/**
 * The studio's spend from the team server, said plainly: per machine and per project, or that it
 * could not be read and the report is this machine's alone.
 */
export function teamSpendSentence(t: TeamSpend): string {
  const days = listWords(t.days.map(dayWords));
  if (!t.reachable)
    return `Team spend (team server) on ${days} could not be read (${t.why}): this report counts this machine's batch alone.`;
  const each = (xs: TeamSpend['byMachine'], none: string) =>
    xs
      .map((x) => `${x.name || none} ${credits(x.credits)} (${x.creates} create${x.creates === 1 ? '' : 's'})`)
      .join(', ');
  const parts = [`Team spend (team server, every machine) on ${days}: ${credits(t.credits)} in ${t.creates} creates`];
  if (t.byMachine.length) parts.push(`by machine: ${each(t.byMachine, '(unknown)')}`);
  if (t.byProject.length) parts.push(`by project: ${each(t.byProject, '(no project)')}`);
  return `${parts.join('; ')}.`;
}
