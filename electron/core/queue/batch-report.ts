import { formatDate } from '../../../shared/dates.ts';
import { shownPath } from '../../../shared/uploaded.ts';
import { writeFile } from 'node:fs/promises';
import { freePath } from '../saved-files.ts';
import { resolve } from 'node:path';
import { findTool, resolvePaths, DEFAULT_SLUGS, type Slugs } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { BatchReport, Charged, ReportCounts, ReportJob, reportCommands } from '../../../shared/contract/report.ts';
import type { UsageQuery, UsageResult } from '../../../shared/contract/team.ts';
import { portableName } from '../../../shared/file-names.ts';
import { toCsv } from '../analytics/csv.ts';
import { utcDay } from '../analytics/ledger.ts';
import { ensureFolder } from '../output-folder.ts';
import { ATTENTION, canceledMessage } from './job-messages.ts';
import type { JobRow, JobStore } from './store.ts';

const DAY = 86_400_000;
/** The usage endpoint answers at most 365 days; older days of a batch are left unknown. */
const MAX_USAGE_DAYS = 365;

export interface ReportDeps {
  store: JobStore;
  /** AnalyticsService.query: the team's credit usage, from its cache when fresh (100 requests a day). */
  usage: (q: UsageQuery, refresh: boolean) => Promise<UsageResult>;
  /** Where an export goes when the caller names no folder. */
  exportDir: () => string;
}

/** The name the team's usage gives a job's tool: its task endpoint's path under /v1/ai/, slugs filled in. */
export function usageToolOf(job: Pick<JobRow, 'tool' | 'params' | 'snapshot'>): string | null {
  const tool = findTool(job.tool);
  if (!tool) return null;
  try {
    const slugs = { ...DEFAULT_SLUGS, ...job.snapshot.slugs } as Slugs;
    return resolvePaths(tool, slugs, job.params).create.replace(/^\/v1\/ai\//, '');
  } catch {
    return null;
  }
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

/** A UTC charge day in the one date format (shared/dates.ts). */
const dayWords = (day: string) => formatDate(day);

const listWords = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

interface Charges {
  actual: number | null;
  basis: string;
  /** Credits per use, by `${day} ${usage tool}`. */
  perUse: Map<string, number>;
}

/** The UTC day the service charged a job's create on (its answer's time; a create canceled in flight, its last change). */
const chargeDay = (j: JobRow) => utcDay(j.submittedAt ?? j.updatedAt);
const rateKey = (j: JobRow) => `${chargeDay(j)} ${usageToolOf(j) ?? j.tool}`;

/**
 * What the accepted creates were charged: for each day, the batch's creates × that day's credits
 * per use of the tool in the team's usage. A cached answer fetched before the batch's last create
 * cannot hold it, so it is asked again, once.
 */
async function chargesOf(deps: ReportDeps, jobs: readonly JobRow[]): Promise<Charges> {
  const charged = jobs.filter((j) => chargedOf(j) === 'yes');
  const perUse = new Map<string, number>();
  if (charged.length === 0) return { actual: 0, basis: 'nothing was sent', perUse };
  const days = [...new Set(charged.map(chargeDay))].sort();
  const to = days.at(-1)!;
  const from =
    days[0] >= utcDay(Date.parse(to) - (MAX_USAGE_DAYS - 1) * DAY)
      ? days[0]
      : utcDay(Date.parse(to) - (MAX_USAGE_DAYS - 1) * DAY);
  const lastCreate = Math.max(...charged.map((j) => j.submittedAt ?? j.updatedAt));
  let usage: UsageResult;
  try {
    const q: UsageQuery = { granularity: 'day', from, to };
    usage = await deps.usage(q, false);
    if (usage.fetchedAt < lastCreate) usage = await deps.usage(q, true);
  } catch (err) {
    if (err instanceof DeskError && err.code === 'forbidden')
      return { actual: null, basis: "this key cannot read the team's usage", perUse };
    if (err instanceof DeskError && err.code === 'rate_limited')
      return {
        actual: null,
        basis: "today's requests for the team's usage are spent (they renew at 00:00 UTC)",
        perUse,
      };
    return { actual: null, basis: `the team's usage could not be read (${(err as Error).message})`, perUse };
  }
  for (const p of usage.points)
    for (const [tool, t] of Object.entries(p.byTool))
      if (t.uses > 0) perUse.set(`${p.date} ${tool}`, t.credits / t.uses);
  const missing = [...new Set(charged.filter((j) => !perUse.has(rateKey(j))).map(chargeDay))].sort();
  if (missing.length)
    return {
      actual: null,
      basis: `your team's usage shows no use of this tool on ${listWords(missing.map(dayWords))} yet`,
      perUse,
    };
  const actual = charged.reduce((a, j) => a + perUse.get(rateKey(j))!, 0);
  return {
    actual: Math.round(actual * 100) / 100,
    basis: `by your team's usage of this tool on ${listWords(days.map(dayWords))}`,
    perUse,
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
  const estimate = deps.store.db
    .prepare('SELECT estimate_credits AS credits, estimate_basis AS basis FROM batches WHERE id = ?')
    .get(id) as { credits: number | null; basis: string | null };
  const jobs = deps.store.list({ batchId: id, limit: 1_000_000, offset: 0 }).jobs;
  const charges = await chargesOf(deps, jobs);
  const perJobEstimate = estimate.credits === null || jobs.length === 0 ? null : estimate.credits / jobs.length;
  const reportJobs: ReportJob[] = jobs.map((j) => {
    const charged = chargedOf(j);
    let actual: number | null = null;
    if (charged === 'no') actual = 0;
    else if (charged === 'yes') actual = charges.perUse.get(rateKey(j)) ?? null;
    return {
      id: j.id,
      input: j.inputPath,
      prompt: promptOf(j),
      state: j.state,
      taskId: j.taskId,
      charged,
      estimateCredits: perJobEstimate === null ? null : Math.round(perJobEstimate * 100) / 100,
      actualCredits: actual === null ? null : Math.round(actual * 100) / 100,
      outputs: j.outputs,
      error: j.error,
    };
  });
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
      actual: charges.actual,
      actualBasis: charges.basis,
    },
    jobs: reportJobs,
  };
}

const CSV_HEADER = [
  'input',
  'state',
  'task_id',
  'charged',
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
