import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { rangeReversed } from '../../../../shared/validation/dates.ts';
import {
  AUDIT_SORT_FIELDS,
  auditFiltersSchema,
  type AuditFilters,
  type AuditSort,
  type ImportReport,
  type SyncReport,
} from '../../../../shared/contract/audit.ts';
import { CLI_LOCK_WAIT } from '../../../core/audit/busy.ts';
import { csvRecord, ndjsonLine, servedEvent } from '../../../core/audit/export.ts';
import { CSV_COLUMNS } from '../../../core/audit/formats/csv.ts';
import { STDIN_NAME } from '../../../core/audit/import.ts';
import { asUtc } from '../../../../shared/validation/dates.ts';
import { iterateEvents } from '../../../core/audit/query.ts';
import { noMatchText } from '../../../../shared/audit-no-match.ts';
import { AuditService } from '../../../core/audit/service.ts';
import { dbPaths } from '../../../core/paths.ts';
import { lazyTarget } from './audit-services.ts';
import { oneLine, terminalJson, UsageError, write, type CliCommand, type CliContext } from '../command.ts';
import { interruptible } from '../interrupt.ts';
import { parseOptions } from './team-common.ts';
import { FORWARD_USAGE, forwardAfter, runForward } from './audit-forward.ts';

/**
 * The filters of `query` and `export`, as the help lists them: each option with the name of its
 * value, or none for a flag. --no-user-id is a flag because --member takes user ids, which those actors lack.
 */
const FILTERS: readonly (readonly [option: string, value?: string])[] = [
  ['--from', 'D'],
  ['--to', 'D'],
  ['--member', 'ID'],
  ['--no-user-id'],
  ['--no-user-id-email', 'EMAIL'],
  ['--group', 'ID'],
  ['--folder', 'REF'],
  ['--event-type', 'T'],
  ['--request-id', 'R'],
  ['--correlation-id', 'C'],
  ['--search', 'TEXT'],
];
const FILTER_OPTS = FILTERS.filter(([, v]) => v).map(([flag]) => flag);
const FILTER_FLAGS = FILTERS.filter(([, v]) => !v).map(([flag]) => flag);
/** The order of `query` and `export` alike: the contract's fields, descending unless --asc. */
const SORT = `[--sort ${AUDIT_SORT_FIELDS.join('|')}] [--asc]`;

/** `label` and `items` joined by spaces into lines of at most `width`, the lines after the first indented under the items. */
const wrap = (label: string, items: string[], width: number) =>
  items
    .reduce<string[]>(
      (lines, item) => {
        const last = lines.at(-1)!;
        if (last.length + 1 + item.length <= width || last === label) lines[lines.length - 1] = `${last} ${item}`;
        else lines.push(`${' '.repeat(label.length)} ${item}`);
        return lines;
      },
      [label],
    )
    .join('\n');

const USAGE = [
  'mediadesk audit sync [--per-page N]',
  '       mediadesk audit status [--json]',
  '       mediadesk audit import FILE...|- [--format ndjson|json|csv] [--json]   (- : standard input)',
  `       mediadesk audit query [query filters] ${SORT} [--limit N] [--json|--csv]`,
  `       mediadesk audit export --out FILE|- [--csv|--ndjson] [query filters] ${SORT}   (- : standard output)`,
  FORWARD_USAGE,
  wrap(
    '   query filters:',
    FILTERS.map(([flag, v]) => `[${flag}${v ? ` ${v}` : ''}]`),
    120,
  ),
  `   --sort: by ${AUDIT_SORT_FIELDS[0]} unless told; descending (newest first) unless --asc`,
  '   --no-user-id: also (or only, without --member) events of actors without a user id: API keys, the system',
  "   --no-user-id-email EMAIL: the same for the actors without a user id of this e-mail only ('' : those without one)",
  '   D: a day YYYY-MM-DD (--to takes all of it) or an ISO 8601 date-time, UTC unless it names its zone',
].join('\n');
/** What each subcommand takes: an option another one uses is refused here rather than ignored. */
const OPTIONS: Record<string, { valued: string[]; flags: string[] }> = {
  sync: { valued: ['--per-page'], flags: [] },
  status: { valued: [], flags: ['--json'] },
  import: { valued: ['--format'], flags: ['--json'] },
  query: { valued: [...FILTER_OPTS, '--sort', '--limit'], flags: [...FILTER_FLAGS, '--asc', '--json', '--csv'] },
  export: { valued: [...FILTER_OPTS, '--sort', '--out'], flags: [...FILTER_FLAGS, '--asc', '--csv', '--ndjson'] },
};

type Parsed = ReturnType<typeof parseOptions>;

function parseArgs(sub: string, args: string[]): Parsed {
  const { valued, flags } = OPTIONS[sub];
  const known = new Set(Object.values(OPTIONS).flatMap((options) => [...options.valued, ...options.flags]));
  for (const a of args) {
    const name = a.startsWith('--') && a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (known.has(name) && !valued.includes(name) && !flags.includes(name))
      throw new UsageError(`audit ${sub} does not take ${name}`);
  }
  return parseOptions(args, valued, flags);
}

const list = (p: Parsed, name: string) => p.list(name);
const one = (p: Parsed, name: string) => p.one(name);

function ids(p: Parsed, name: string): number[] | undefined {
  const raw = list(p, name);
  if (!raw.length) return undefined;
  return raw.map((v) => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${name} takes integer ids of at least 1, got "${v}"`);
    return Number(v);
  });
}

/** E-mails, comma-separated or repeated; a value of '' names the actors without one (list() drops empties). */
function emails(p: Parsed, name: string): string[] | undefined {
  const raw = p.values.get(name);
  return raw?.flatMap((v) =>
    v.trim()
      ? v
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : [''],
  );
}

function filtersOf(p: Parsed): AuditFilters {
  // A time without a zone is UTC here as everywhere in the audit log, not the machine's zone.
  const utc = (v: string | undefined) => (v === undefined ? v : asUtc(v));
  const raw = {
    from: utc(one(p, '--from')),
    to: utc(one(p, '--to')),
    memberIds: ids(p, '--member'),
    noUserId: p.flags.has('--no-user-id') || undefined,
    noUserIdEmails: emails(p, '--no-user-id-email'),
    groupIds: ids(p, '--group'),
    folderRefs: list(p, '--folder').length ? list(p, '--folder') : undefined,
    eventTypes: list(p, '--event-type').length ? list(p, '--event-type') : undefined,
    requestId: one(p, '--request-id'),
    correlationId: one(p, '--correlation-id'),
    search: one(p, '--search'),
  };
  // A reversed range matches nothing; saying so beats an empty answer that looks like no events.
  if (rangeReversed(raw.from, raw.to)) throw new UsageError('--from is after --to');
  const r = auditFiltersSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)));
  if (!r.success) {
    const i = r.error.issues[0];
    const flag: Record<string, string> = {
      from: '--from',
      to: '--to',
      memberIds: '--member',
      noUserIdEmails: '--no-user-id-email',
      groupIds: '--group',
      folderRefs: '--folder',
      eventTypes: '--event-type',
      requestId: '--request-id',
      correlationId: '--correlation-id',
      search: '--search',
    };
    throw new UsageError(`${flag[String(i.path[0])] ?? i.path.join('.')} ${i.message}`);
  }
  return r.data;
}

function sortOf(p: Parsed): AuditSort {
  const field = one(p, '--sort') ?? AUDIT_SORT_FIELDS[0];
  const known = AUDIT_SORT_FIELDS.find((f) => f === field);
  if (!known)
    throw new UsageError(
      `--sort is ${AUDIT_SORT_FIELDS.slice(0, -1).join(', ')} or ${AUDIT_SORT_FIELDS.at(-1)}, got "${field}"`,
    );
  return { field: known, dir: p.flags.has('--asc') ? 'asc' : 'desc' };
}

function formatOf(p: Parsed): ImportReport['format'] | undefined {
  const v = one(p, '--format');
  if (v === undefined) return undefined;
  if (v !== 'ndjson' && v !== 'json' && v !== 'csv')
    throw new UsageError(`--format is ndjson, json or csv, got "${v}"`);
  return v;
}

function limitOf(p: Parsed): number | undefined {
  const v = one(p, '--limit');
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--limit takes a positive integer, got "${v}"`);
  return Number(v);
}

const PROGRESS_EVERY_MS = 1000;

function printImport(ctx: CliContext, r: ImportReport): void {
  ctx.stdout.write(
    `${r.path === STDIN_NAME ? 'standard input' : oneLine(r.path)} (${r.format}): ${r.items} item(s), ${r.accepted} added, ${r.duplicates} already cached, ${r.rejected} rejected${r.notAdded ? `, ${r.notAdded} read but not added (interrupted)` : ''}\n`,
  );
  for (const x of r.rejects) ctx.stdout.write(`  line ${x.line}, item ${x.item}: ${oneLine(x.reason)}\n`);
  for (const w of r.warnings) ctx.stdout.write(`  warning: ${oneLine(w)}\n`);
  if (r.fatal) ctx.stdout.write(`  stopped: ${oneLine(r.fatal)}\n`);
}

/**
 * Every match (or `limit`) streamed to stdout, an event a line or CSV records; resolves to the count.
 * NDJSON escapes line separators and bidi controls; CSV holds the data exactly, having no escapes.
 */
async function streamEvents(
  ctx: CliContext,
  service: AuditService,
  options: { filters: AuditFilters; sort: AuditSort; csv: boolean; limit?: number },
): Promise<number> {
  if (options.csv) await write(ctx.stdout, CSV_COLUMNS.join(',') + '\r\n');
  let n = 0;
  for (const r of iterateEvents(service.store.db, options.filters, options.sort)) {
    if (options.limit !== undefined && n >= options.limit) break;
    const { raw, withheld } = servedEvent(r);
    if (withheld)
      ctx.stderr.write(
        `mediadesk audit: event ${oneLine(r.event_id)}: ${withheld}; written as a note with its indexed fields only\n`,
      );
    await write(ctx.stdout, options.csv ? csvRecord(JSON.parse(raw) as Record<string, unknown>) : ndjsonLine(raw));
    n++;
  }
  return n;
}

async function query(ctx: CliContext, service: AuditService, p: Parsed): Promise<number> {
  const filters = filtersOf(p);
  const sort = sortOf(p);
  const limit = limitOf(p);
  if (p.flags.has('--json') && p.flags.has('--csv')) throw new UsageError('give --json or --csv, not both');
  if (p.flags.has('--json') || p.flags.has('--csv')) {
    await streamEvents(ctx, service, { filters, sort, limit, csv: p.flags.has('--csv') });
    return 0;
  }
  // A query page holds at most 1000 rows; a larger --limit walks the cursor rather than stopping short.
  const want = limit ?? 50;
  let shown = 0;
  let total: number | undefined;
  let after: string | undefined;
  do {
    const page = await service.querySearched({
      filters,
      sort,
      limit: Math.min(want - shown, 1000),
      withTotal: total === undefined,
      after,
    });
    total ??= page.total;
    if (page.searchedIn && after === undefined)
      ctx.stderr.write(
        page.searchedIn.where === 'team'
          ? `searched the team archive's full-text index${page.searchedIn.note ? ` (${oneLine(page.searchedIn.note)})` : ''}\n`
          : `searched this machine's cache${page.searchedIn.note ? `: ${oneLine(page.searchedIn.note)}` : ''}\n`,
      );
    for (const r of page.rows) {
      // An imported file's text is not trusted: a newline would split an event over two lines, an
      // escape sequence would drive the terminal. Shown escaped, as `\n` or `\x1b`.
      const who = r.memberEmail ?? (r.memberId === null ? '-' : `user ${r.memberId}`);
      await write(
        ctx.stdout,
        `${r.date}  ${oneLine(r.eventType).padEnd(28)}  ${oneLine(who).padEnd(30)}  ${oneLine(r.status ?? '')}  ${oneLine(r.eventId)}\n`,
      );
    }
    shown += page.rows.length;
    after = page.next ?? undefined;
  } while (after && shown < want);
  // On stderr, as `jobs list` and `creations` put theirs: every stdout line is an event.
  ctx.stderr.write(`${shown} of ${total} event(s)\n`);
  if (total === 0) {
    const s = await service.status();
    ctx.stderr.write(`${noMatchText(filters, s, 'dropping the filter options')}\n`);
  }
  return 0;
}

export const auditCommand: CliCommand = {
  name: 'audit',
  usage: USAGE,
  // eslint-disable-next-line max-lines-per-function -- one case per sub-command (sync, status, import, query, export) over the flags parsed once
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    if (!sub) throw new UsageError('say sync, status, import, query, export, forward or sinks');
    if (sub === 'forward' || sub === 'sinks') {
      const service = new AuditService({
        dbPath: dbPaths(ctx.home).audit,
        target: lazyTarget(ctx).target,
        lockWait: CLI_LOCK_WAIT,
      });
      try {
        return await runForward(ctx, service, sub, rest);
      } finally {
        await service.close();
      }
    }
    if (!['sync', 'status', 'import', 'query', 'export'].includes(sub))
      throw new UsageError(`unknown audit command "${sub}" (sync, status, import, query, export, forward, sinks)`);
    const p = parseArgs(sub, rest);
    if (sub === 'import' && p.positional.length === 0) throw new UsageError('audit import needs at least one FILE');
    if (sub !== 'import' && p.positional.length) throw new UsageError(`unexpected argument "${p.positional[0]}"`);
    if (sub === 'export' && !one(p, '--out')) throw new UsageError('audit export needs --out FILE');

    // Smaller pages spend more of the daily budget; the knob exists for slow links and tests.
    const perPageRaw = one(p, '--per-page');
    if (perPageRaw !== undefined && (!/^\d+$/.test(perPageRaw) || Number(perPageRaw) < 1 || Number(perPageRaw) > 100))
      throw new UsageError(`--per-page takes 1 to 100, got "${perPageRaw}"`);
    const api = lazyTarget(ctx);
    let lastWaiting = '';
    const service = new AuditService({
      dbPath: dbPaths(ctx.home).audit,
      target: api.target,
      team: api.team,
      perPage: perPageRaw === undefined ? undefined : Number(perPageRaw),
      onSyncProgress: (x) => {
        // Following the team archive repeats its line every half second: said again only when it changes.
        if (x.waiting && x.waiting === lastWaiting) return;
        lastWaiting = x.waiting ?? '';
        ctx.stderr.write(
          x.waiting
            ? `${x.waiting}\n`
            : `window ${x.window.from}..${x.window.to}: page ${x.pages}, ${x.received} received, ${x.inserted} new, budget left ${x.budgetLeft}\n`,
        );
      },
      // Not a UI: each write may hold the command as long as it takes another process to let go.
      lockWait: CLI_LOCK_WAIT,
    });
    try {
      switch (sub) {
        case 'sync': {
          const stop = interruptible();
          let r: SyncReport;
          try {
            r = await service.sync({ signal: stop.signal });
          } finally {
            stop.release();
          }
          ctx.stdout.write(
            `${r.outcome === 'complete' ? 'sync complete' : 'sync stopped'}: ${r.pages} page(s), ${r.received} event(s) received, ${r.inserted} new, ${r.requests} request(s)${r.rejected ? `, ${r.rejected} refused` : ''}\n`,
          );
          // As an import lists its rejected rows: each refused event named, by id and place.
          for (const x of r.rejects ?? [])
            ctx.stdout.write(
              `  page ${x.page}, event ${x.item}${x.eventId === null ? '' : ` (${oneLine(x.eventId)})`}: ${oneLine(x.reason)}\n`,
            );
          if (r.rejected && r.rejects && r.rejected > r.rejects.length)
            ctx.stdout.write(`  ${r.rejected - r.rejects.length} more refused event(s) not listed\n`);
          if (r.team) ctx.stdout.write(`team archive: ${oneLine(r.team.note)}\n`);
          if (stop.signal.aborted && r.outcome === 'stopped' && !r.error) {
            ctx.stderr.write(
              `interrupted: the ${r.inserted} new event(s) are kept and the place in the walk is saved; run mediadesk audit sync to resume from there\n`,
            );
            return 130;
          }
          if (r.error) {
            ctx.stderr.write(`mediadesk audit sync: ${r.error.kind}: ${oneLine(r.error.message)}\n`);
            return 1;
          }
          await forwardAfter(ctx, service);
          return 0;
        }
        case 'status': {
          const s = await service.status();
          if (p.flags.has('--json')) ctx.stdout.write(terminalJson(s, 2) + '\n');
          else {
            ctx.stdout.write(`${s.events} event(s) cached${s.oldest ? `, ${s.oldest} .. ${s.newest}` : ''}\n`);
            ctx.stdout.write(
              `last successful sync: ${s.lastSuccessAt ?? 'never'}${s.resumable ? ' (an interrupted sync will resume)' : ''}\n`,
            );
            ctx.stdout.write(
              `requests today (${s.budget.day} UTC): ${s.budget.used} of ${s.budget.limit}, ${s.budget.left} left\n`,
            );
            if (s.retryAfter) ctx.stdout.write(`rate limited until ${s.retryAfter}\n`);
            if (s.lastError)
              ctx.stdout.write(
                `last error (${s.lastError.at}): ${s.lastError.kind}: ${oneLine(s.lastError.message)}\n`,
              );
            const busy = [s.elsewhere.importing && 'importing into', s.elsewhere.syncing && 'syncing'].filter(Boolean);
            if (busy.length) ctx.stdout.write(`another process is ${busy.join(' and ')} this cache now\n`);
          }
          return 0;
        }
        case 'import': {
          // Progress goes to stderr, at once and then once a second at most: stdout stays the
          // report, for scripts.
          let last = 0;
          const onProgress = (x: {
            path: string;
            items: number;
            accepted: number;
            rejected: number;
            waiting?: string;
          }) => {
            if (x.waiting)
              return void ctx.stderr.write(
                `${x.path === STDIN_NAME ? 'standard input' : oneLine(x.path)}: ${x.waiting}\n`,
              );
            const now = Date.now();
            if (now - last < PROGRESS_EVERY_MS) return;
            last = now;
            ctx.stderr.write(
              `${x.path === STDIN_NAME ? 'standard input' : oneLine(x.path)}: ${x.items} item(s) read, ${x.accepted} added, ${x.rejected} rejected\n`,
            );
          };
          const format = formatOf(p);
          const fromStdin = p.positional.includes(STDIN_NAME);
          if (fromStdin && p.positional.length > 1)
            throw new UsageError('- (standard input) is imported alone: give it or files, not both');
          if (fromStdin && ctx.stdin.isTTY)
            throw new UsageError(
              '- reads an exported log from standard input, which is a terminal here: pipe or redirect the export in (mediadesk audit import - < audit.ndjson)',
            );
          // Every file is looked for first: a typo in the third name must not leave two imported and a failure.
          if (!fromStdin) {
            for (const f of p.positional) {
              const st = statSync(f, { throwIfNoEntry: false });
              if (!st) throw new UsageError(`${oneLine(f)}: no such file`);
              if (!st.isFile())
                throw new UsageError(`${oneLine(f)}: not a file (a folder?); give the exported files themselves`);
            }
          }
          const stop = interruptible();
          let reports: ImportReport[];
          try {
            const onSort = (x: { path: string; rows: number }) =>
              ctx.stderr.write(
                `${oneLine(x.path)}: adding the ${x.rows} event(s) held back, in date order; this last step finishes even if interrupted\n`,
              );
            // Said because the count added stops growing from there until the last step.
            const onHold = (x: { path: string; items: number }) =>
              ctx.stderr.write(
                `${oneLine(x.path)}: not in date order from about item ${x.items}: the rest is read first and added in date order at the end\n`,
              );
            const opts = { onProgress, onHold, onSort, format, signal: stop.signal };
            reports = fromStdin
              ? [await service.importStream(ctx.stdin.setEncoding('utf8'), opts)]
              : await service.import(p.positional, opts);
            // A Ctrl-C during a last step that runs in one go is delivered only at the event loop's next
            // poll for I/O: one full turn of the loop lets it in while it is still listened for.
            for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r));
          } finally {
            stop.release();
          }
          if (p.flags.has('--json')) ctx.stdout.write(terminalJson(reports, 2) + '\n');
          else for (const r of reports) printImport(ctx, r);
          if (!stop.signal.aborted) await forwardAfter(ctx, service);
          const cut = reports.some((r) => r.interrupted) || reports.length < (fromStdin ? 1 : p.positional.length);
          if (stop.signal.aborted && !cut)
            ctx.stderr.write(
              'interrupted too late to stop the import: it had already finished, and every event it reports is kept\n',
            );
          else if (stop.signal.aborted) {
            const kept = reports.reduce((n, r) => n + r.accepted, 0);
            const left = reports.reduce((n, r) => n + (r.notAdded ?? 0), 0);
            const notYet = left ? `; ${left} more read were not added yet` : '';
            ctx.stderr.write(
              `interrupted: ${kept} event(s) imported so far are kept${notYet}; run the same command again to continue (events already cached are skipped)\n`,
            );
            return 130;
          }
          return reports.some((r) => r.fatal || r.rejected) ? 1 : 0;
        }
        case 'query':
          return await query(ctx, service, p);
        case 'export': {
          const out = one(p, '--out')!;
          if (p.flags.has('--csv') && p.flags.has('--ndjson')) throw new UsageError('give --csv or --ndjson, not both');
          // A .json name would promise one JSON document; the export is NDJSON (one event a line) or CSV.
          if (!p.flags.has('--csv') && !p.flags.has('--ndjson') && /\.json$/i.test(out))
            throw new UsageError(
              `audit export writes NDJSON (one event a line) or CSV, not a JSON array: name the file .ndjson or .csv, or add --ndjson to write NDJSON to ${out}`,
            );
          const format = p.flags.has('--csv') || (!p.flags.has('--ndjson') && /\.csv$/i.test(out)) ? 'csv' : 'ndjson';
          // `--out -` is standard output, as for most Unix tools (it made a file named "-"); the count goes to stderr.
          if (out === '-') {
            const rows = await streamEvents(ctx, service, {
              filters: filtersOf(p),
              sort: sortOf(p),
              csv: format === 'csv',
            });
            ctx.stderr.write(`wrote ${rows} event(s) to standard output\n`);
            return 0;
          }
          const folder = dirname(resolve(out));
          if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory())
            throw new UsageError(`--out: the folder ${folder} does not exist`);
          const r = await service.export({ format, path: out, filters: filtersOf(p), sort: sortOf(p) });
          ctx.stdout.write(`wrote ${r.rows} event(s) to ${oneLine(r.path)}\n`);
          return 0;
        }
      }
      return 2;
    } finally {
      await service.close();
      await api.close();
    }
  },
};
