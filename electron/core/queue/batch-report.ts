import { shownPath } from '../../../shared/uploaded.ts';
import { writeFile } from 'node:fs/promises';
import { freePath } from '../saved-files.ts';
import { resolve } from 'node:path';
import { findTool } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { HandlerMap } from '../../../shared/contract/define.ts';
import type {
  BatchReport,
  Charged,
  ReportCounts,
  ReportJob,
  reportCommands,
  ServiceUsage,
} from '../../../shared/contract/report.ts';
import { priceOfCreate } from '../../../shared/prices.ts';
import type { PriceBook } from '../limits/prices.ts';
import type { UsageQuery, UsageResult } from '../../../shared/contract/team.ts';
import type { TeamSpend } from '../../../shared/contract/team-server.ts';
import { portableName } from '../../../shared/file-names.ts';
import { toCsv } from '../analytics/csv.ts';
import { utcDay } from '../analytics/ledger.ts';
import { ensureFolder } from '../output-folder.ts';
import { ATTENTION, canceledMessage } from './job-messages.ts';
import type { JobRow, JobStore } from './store.ts';

const DAY = 86_400_000;
/** The credit usage answers at most 180 days on Business (365 on Enterprise); older days of a batch are left out. */
const MAX_USAGE_DAYS = 180;

export interface ReportDeps {
  store: JobStore;
  /** The price table with the user's own prices: what each charged create cost. */
  prices: Pick<PriceBook, 'priceOf'>;
  /** AnalyticsService.query: the team's credit usage, from its cache when fresh (100 requests a day). */
  usage: (q: UsageQuery, refresh: boolean) => Promise<UsageResult>;
  /** Where an export goes when the caller names no folder. */
  exportDir: () => string;
  /** With a team server: the studio's spend on those days (null: none is set). */
  teamSpend?: (days: string[]) => Promise<TeamSpend | null>;
}

/** Whether a job's create was charged: it has a task (accepted), or may have reached the service unanswered. */
export function chargedOf(j: Pick<JobRow, 'taskId' | 'state' | 'error'>): Charged {
  if (j.taskId) return 'yes';
  if (j.state === 'submitting') return 'unknown';
  if (j.state === 'needs_attention') return 'unknown';
  if (j.state === 'canceled' && (j.error === canceledMessage('maybe') || j.error === ATTENTION.canceledMaybeSent))
    return 'unknown';
  return 'no';
}

/** When each create of a job the service accepted was charged: its attempts before a Retry, then its task. */
function chargeTimes(j: JobRow): number[] {
  const times = j.earlierCharges.map((c) => c.at);
  if (chargedOf(j) === 'yes') times.push(j.submittedAt ?? j.updatedAt);
  return times;
}

function countsOf(jobs: readonly JobRow[]): ReportCounts {
  const c: ReportCounts = {
    total: jobs.length,
    sent: 0,
    results: 0,
    chargedFailed: 0,
    notDownloaded: 0,
    notCharged: 0,
    running: 0,
    queued: 0,
    canceled: 0,
    needsAttention: 0,
  };
  for (const j of jobs) {
    // An attempt a Retry replaced was accepted and then failed on the service: charged all the same.
    c.sent += j.earlierCharges.length;
    c.chargedFailed += j.earlierCharges.length;
    if (j.taskId) c.sent++;
    if (j.state === 'done') c.results++;
    else if (j.state === 'failed') {
      // A completed task whose download failed keeps what the service generated; a FAILED one has none.
      if (!j.taskId) c.notCharged++;
      else if (j.generated?.length) c.notDownloaded++;
      else c.chargedFailed++;
    } else if (j.state === 'queued') c.queued++;
    else if (j.state === 'canceled') c.canceled++;
    else if (j.state === 'needs_attention') c.needsAttention++;
    else c.running++;
  }
  return c;
}

/**
 * What the service reports for the days the batch was charged on: its category totals (it names
 * no tool), asked once more when the cached answer is older than the batch's last create.
 */
async function serviceUsageOf(deps: ReportDeps, times: number[]): Promise<ServiceUsage> {
  const days = [...new Set(times.map((t) => utcDay(t)))].sort();
  const to = days.at(-1)!;
  const earliest = utcDay(Date.parse(to) - (MAX_USAGE_DAYS - 1) * DAY);
  const from = days[0] >= earliest ? days[0] : earliest;
  const asked = days.filter((d) => d >= from);
  const unread = (why: string): ServiceUsage => ({ days: asked, uses: null, credits: null, categories: [], why });
  let usage: UsageResult;
  try {
    const q: UsageQuery = { granularity: 'day', from, to };
    usage = await deps.usage(q, false);
    if (usage.fetchedAt < Math.max(...times)) usage = await deps.usage(q, true);
  } catch (err) {
    if (err instanceof DeskError && err.code === 'forbidden') return unread("this key cannot read the team's usage");
    if (err instanceof DeskError && err.code === 'rate_limited')
      return unread("today's requests for the team's usage are spent (they renew at 00:00 UTC)");
    return unread(`the team's usage could not be read (${(err as Error).message})`);
  }
  const byName = new Map<string, { uses: number; credits: number }>();
  for (const p of usage.points) {
    if (!asked.includes(p.date)) continue;
    for (const [name, t] of Object.entries(p.byTool)) {
      const c = byName.get(name) ?? byName.set(name, { uses: 0, credits: 0 }).get(name)!;
      c.uses += t.uses;
      c.credits += t.credits;
    }
  }
  const categories = [...byName].map(([name, t]) => ({ name, ...t })).sort((x, y) => y.credits - x.credits);
  return {
    days: asked,
    uses: categories.reduce((a, c) => a + c.uses, 0),
    credits: categories.reduce((a, c) => a + c.credits, 0),
    categories,
    why: null,
  };
}

function promptOf(j: JobRow): string | null {
  return j.inputPath === null && typeof j.params.prompt === 'string' ? j.params.prompt : null;
}

/** A batch by its id or the start of it; refused by name when there is none, or more than one. */
function batchIdOf(store: JobStore, idOrPrefix: string): string {
  const found = store.resolveBatchId(idOrPrefix);
  if ('none' in found) throw new DeskError('not_found', `no batch ${idOrPrefix}`);
  if ('ambiguous' in found)
    throw new DeskError('invalid', `${idOrPrefix} starts more than one batch id; give more of it`);
  return found.id;
}

export async function batchReport(deps: ReportDeps, idOrPrefix: string): Promise<BatchReport> {
  const id = batchIdOf(deps.store, idOrPrefix);
  const batch = deps.store.batch(id)!;
  const estimate = batch.estimate ?? { credits: null, basis: null };
  const jobs = deps.store.list({ batchId: id, limit: 1_000_000, offset: 0 }).jobs;
  const price = priceOfCreate(deps.prices.priceOf(batch.tool), batch.params);
  const times = jobs.flatMap(chargeTimes);
  const perJobEstimate = estimate.credits === null || jobs.length === 0 ? null : estimate.credits / jobs.length;
  const round = (n: number) => Math.round(n * 100) / 100;
  const reportJobs: ReportJob[] = jobs.map((j) => {
    const charged = chargedOf(j);
    const creates = chargeTimes(j).length;
    let actual: number | null = null;
    if (creates === 0 && charged !== 'unknown') actual = 0;
    else if (creates > 0) {
      const each = priceOfCreate(deps.prices.priceOf(j.tool), j.params).creditsEach;
      actual = each === null ? null : creates * each;
    }
    return {
      id: j.id,
      input: j.inputPath,
      prompt: promptOf(j),
      state: j.state,
      taskId: j.taskId,
      charged: creates > 0 ? 'yes' : charged,
      chargedCreates: creates,
      estimateCredits: perJobEstimate === null ? null : round(perJobEstimate),
      actualCredits: actual === null ? null : round(actual),
      outputs: j.outputs,
      error: j.error,
    };
  });
  const unpriced = reportJobs.some((j) => j.chargedCreates > 0 && j.actualCredits === null);
  let actual: number | null = 0;
  let actualBasis = 'nothing was sent';
  if (times.length && unpriced) [actual, actualBasis] = [null, price.basis];
  else if (times.length) {
    actual = round(reportJobs.reduce((a, j) => a + (j.actualCredits ?? 0), 0));
    actualBasis = `${times.length} charged create${times.length === 1 ? '' : 's'} at ${price.basis}`;
  }
  const service = times.length === 0 ? null : await serviceUsageOf(deps, times);
  const team = await deps.teamSpend?.([...new Set((times.length ? times : [batch.createdAt]).map(utcDay))].sort());
  return {
    batchId: id,
    tool: batch.tool,
    toolLabel: findTool(batch.tool)?.title ?? batch.tool,
    createdAt: batch.createdAt,
    finished: batch.finished,
    counts: countsOf(jobs),
    credits: {
      estimate: estimate.credits,
      estimateBasis: estimate.basis,
      actual,
      actualBasis,
      service,
    },
    jobs: reportJobs,
    ...(team ? { team } : {}),
  };
}

const CSV_HEADER = [
  'input',
  'state',
  'task_id',
  'charged',
  'charged_creates',
  'estimate_credits',
  'actual_credits',
  'outputs',
  'error',
] as const;

/** A job's input for the CSV: a browser upload by its own name (shownPath), a prompt job by its prompt. */
const inputCell = (j: ReportJob): string => {
  if (j.input !== null) return shownPath(j.input);
  return j.prompt === null ? '' : `prompt: ${j.prompt}`;
};

/** One row per job; several outputs of a job in one cell, one per line. */
export function reportCsv(r: BatchReport): string {
  return toCsv(
    [...CSV_HEADER],
    r.jobs.map((j) => [
      inputCell(j),
      j.state,
      j.taskId ?? '',
      j.charged,
      j.chargedCreates,
      j.estimateCredits ?? '',
      j.actualCredits ?? '',
      j.outputs.join('\n'),
      j.error ?? '',
    ]),
  );
}

export async function exportReport(
  deps: ReportDeps,
  idOrPrefix: string,
  outDir?: string,
): Promise<{ path: string; rows: number }> {
  const r = await batchReport(deps, idOrPrefix);
  const dir = resolve(outDir ?? deps.exportDir());
  await ensureFolder(dir);
  // Named as a person finds it: the tool and when the batch started (UTC), which tells batches apart.
  const started = new Date(r.createdAt).toISOString().slice(0, 19).replace('T', ' ').replace(/:/g, '-');
  const path = freePath(dir, portableName(`${r.toolLabel} report ${started}.csv`, 'batch report.csv'));
  await writeFile(path, reportCsv(r), 'utf8');
  return { path, rows: r.jobs.length };
}

/** The report's commands; one spread line in createCore wires them. */
export function reportHandlers(deps: ReportDeps): HandlerMap<typeof reportCommands> {
  return {
    'batches.report': ({ id }) => batchReport(deps, id),
    'batches.exportReport': ({ id }) => exportReport(deps, id),
  };
}
