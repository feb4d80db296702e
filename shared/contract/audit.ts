import { z } from 'zod';
import { command, empty } from './define.ts';
import { dayOrInstantSchema, rangeReversed } from '../validation/dates.ts';

export * from './audit-words.ts';

/**
 * The offline audit cache: sync from the API, import of exported files, and the queries the
 * audit viewer runs. Everything here reads the local cache except `audit.sync`.
 */

const idList = z.array(z.number().int().min(1)).max(500);
const strList = z.array(z.string().min(1).max(500)).max(500);

/** The API's own filters (api-spec: Audit-log search), plus correlation_id for the viewer's links. */
export const auditFiltersSchema = z
  .object({
    /** A day (YYYY-MM-DD, UTC, the whole day) or an exact ISO 8601 instant. */
    from: dayOrInstantSchema.optional(),
    to: dayOrInstantSchema.optional(),
    memberIds: idList.optional(),
    /**
     * Also (or only) events whose actor has no user id: API-key and system actors (member.user_id
     * is nullable), which memberIds cannot name. Ored with memberIds, like one more member.
     */
    noUserId: z.boolean().optional(),
    /**
     * Events of actors without a user id, told apart by their e-mail ('' : an actor with no e-mail
     * either): the member facet's entries for them (NO_USER_ID_EMAIL). Ored with memberIds and noUserId.
     */
    noUserIdEmails: z.array(z.string().max(500)).max(500).optional(),
    groupIds: idList.optional(),
    folderRefs: strList.optional(),
    eventTypes: strList.optional(),
    requestId: z.string().min(1).max(500).optional(),
    correlationId: z.string().min(1).max(500).optional(),
    /** Full text over the payload; words are matched as literal terms, a trailing * makes a prefix. */
    search: z.string().max(1000).optional(),
  })
  .strict()
  .refine((f) => !rangeReversed(f.from, f.to), {
    message: 'is after to: no event can fall between them',
    path: ['from'],
  });
export type AuditFilters = z.infer<typeof auditFiltersSchema>;

export const AUDIT_SORT_FIELDS = ['date', 'event_type', 'member'] as const;
export const auditSortSchema = z
  .object({
    field: z.enum(AUDIT_SORT_FIELDS).default('date'),
    dir: z.enum(['asc', 'desc']).default('desc'),
  })
  .strict();

/** One table row: the indexed columns, enough for the virtualized table without the raw JSON. */
export const auditRowSchema = z.object({
  eventId: z.string(),
  date: z.string(),
  eventType: z.string(),
  verb: z.string().nullable(),
  status: z.string().nullable(),
  category: z.string().nullable(),
  memberId: z.number().nullable(),
  memberEmail: z.string().nullable(),
  memberType: z.string().nullable(),
  groupId: z.number().nullable(),
  folderRef: z.string().nullable(),
  /** The name the events of that folder carry (`action.folder_name`), or null where none names it. */
  folderName: z.string().nullable(),
  projectRef: z.string().nullable(),
  requestId: z.string().nullable(),
  correlationId: z.string().nullable(),
  resourceId: z.string().nullable(),
});
export type AuditRow = z.infer<typeof auditRowSchema>;

export const auditQueryRequestSchema = z
  .object({
    filters: auditFiltersSchema.default({}),
    sort: auditSortSchema.default({ field: 'date', dir: 'desc' }),
    limit: z.number().int().min(1).max(1000).default(100),
    /** Either an offset, or the `next` cursor of the previous page (keyset: constant time at any depth). */
    offset: z.number().int().min(0).optional(),
    after: z.string().max(2000).optional(),
    /** Counting all matches costs a scan; ask for it once per filter change, not per page. */
    withTotal: z.boolean().default(false),
  })
  .strict()
  .refine((r) => r.offset === undefined || r.after === undefined, {
    message: 'give offset or after, not both',
    path: ['after'],
  });

export const auditQueryResponseSchema = z.object({
  rows: z.array(auditRowSchema),
  /** Cursor for the next page; null at the end. */
  next: z.string().nullable(),
  total: z.number().int().optional(),
  /**
   * With a search and a team server set: where the words were looked up, the team archive's
   * full-text index ('team') or this machine's cache ('local'), and why when not the team's.
   */
  searchedIn: z.object({ where: z.enum(['team', 'local']), note: z.string().nullable() }).optional(),
});

export const auditEventDetailSchema = z.object({
  row: auditRowSchema,
  /** The event exactly as the API (or the imported file) gave it: old_state/new_state included. */
  event: z.record(z.string(), z.unknown()),
  origin: z.enum(['sync', 'import']),
  /** Other events of the same request and of the same correlation id (capped; see the counts). */
  sameRequest: z.array(auditRowSchema),
  sameRequestCount: z.number().int(),
  sameCorrelation: z.array(auditRowSchema),
  sameCorrelationCount: z.number().int(),
});

export const facetCountSchema = z.object({
  value: z.string(),
  label: z.string().nullable(),
  count: z.number().int(),
  /** Member facet, an actor without a user id: its type as the API gives it (api_key, system…). */
  actorType: z.string().nullable().optional(),
});
export const auditFacetsSchema = z.object({
  eventTypes: z.array(facetCountSchema),
  members: z.array(facetCountSchema),
  /** Distinct values in all, of which the lists above hold the top `limit` by count. */
  eventTypesDistinct: z.number().int().optional(),
  membersDistinct: z.number().int().optional(),
});

export const auditTimelineSchema = z.object({
  bucket: z.enum(['hour', 'day']),
  /** Start of each bucket (ISO, UTC) with its count; empty buckets are omitted. */
  points: z.array(z.object({ start: z.string(), count: z.number().int() })),
});

export const syncErrorKindSchema = z.enum([
  'forbidden_role',
  'forbidden_plan',
  'forbidden_disabled',
  'forbidden',
  'unauthorized',
  'rate_limited',
  'budget_exhausted',
  'network',
  'server',
  'invalid',
  'disk_full',
  'busy',
  /** The team archive did not take a page (the team server went away, or the sync lease was lost). */
  'team_server',
]);

export const syncProgressSchema = z.object({
  window: z.object({ from: z.string(), to: z.string() }),
  pages: z.number().int(),
  received: z.number().int(),
  inserted: z.number().int(),
  budgetLeft: z.number().int(),
  /** Set while the sync waits for another process (the mediadesk CLI, say) to let go of the cache: what it waits for. */
  waiting: z.string().optional(),
});

/** A file of an `audit.import` as it goes in, after each batch (at most ~10 a second). */
export const importProgressSchema = z.object({
  path: z.string(),
  /** This file's place (1-based) among the import's `files`. */
  file: z.number().int(),
  files: z.number().int(),
  /** Items read so far, rejected ones included; as in the report. */
  items: z.number().int(),
  accepted: z.number().int(),
  rejected: z.number().int(),
  /** How far through the file the reading is; null when its size is unknown (standard input). */
  bytes: z.object({ bytesRead: z.number().int(), bytes: z.number().int() }).nullable(),
  /**
   * A staged load (a large file) that met rows out of date order: from about item `from` the rows
   * read are held back, so `accepted` stops growing, and added in date order at the end (`adding`:
   * that last step has begun, which a stop does not cut short). Absent while none are held back.
   */
  held: z.object({ from: z.number().int(), rows: z.number().int(), adding: z.boolean() }).optional(),
  /** Set while the import waits for another process (the mediadesk CLI, say) to let go of the cache: what it waits for. */
  waiting: z.string().optional(),
});

/**
 * A task of the app's running now (an import, a sync) as any window can pick it up, one reloaded
 * since it started or another tab: what it last reported (null before its first progress) and
 * whether a stop was asked for. Its end comes to every window as the task's `…Done` event.
 */
const runningSchema = <P extends z.ZodType>(progress: P) =>
  z.object({ progress: progress.nullable(), stopping: z.boolean() }).nullable();

export const auditStatusSchema = z.object({
  events: z.number().int(),
  oldest: z.string().nullable(),
  newest: z.string().nullable(),
  lastSyncAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  /** A walk interrupted (kill, 429, budget) that the next sync continues from its cursor. */
  resumable: z.boolean(),
  lastError: z.object({ kind: syncErrorKindSchema, message: z.string(), at: z.string() }).nullable(),
  /** Set after a 429: the API asked not to be called before this instant. */
  retryAfter: z.string().nullable(),
  budget: z.object({ day: z.string(), used: z.number().int(), limit: z.number().int(), left: z.number().int() }),
  /** The app's sync and import running now (audit.sync, audit.import); null when none. */
  running: z.object({ sync: runningSchema(syncProgressSchema), import: runningSchema(importProgressSchema) }),
  /**
   * Another process (the CLI, the app's other host) importing into or syncing this cache now. While
   * any import runs, events, oldest and newest stay as last counted, and are counted again after it.
   */
  elsewhere: z.object({ importing: z.boolean(), syncing: z.boolean() }),
});

export const syncReportSchema = z.object({
  outcome: z.enum(['complete', 'stopped']),
  pages: z.number().int(),
  received: z.number().int(),
  inserted: z.number().int(),
  requests: z.number().int(),
  windows: z.array(z.object({ from: z.string(), to: z.string() })),
  error: z.object({ kind: syncErrorKindSchema, message: z.string() }).optional(),
  /**
   * Events the server sent that the cache refused (the same check as an import's: a field
   * missing, nested or sized beyond an event's limits); absent when none. `rejects` lists the
   * first of them: the event's id when it had one, and its page and place on the page (1-based).
   */
  rejected: z.number().int().optional(),
  rejects: z
    .array(
      z.object({ eventId: z.string().nullable(), page: z.number().int(), item: z.number().int(), reason: z.string() }),
    )
    .optional(),
  /**
   * With a team server set: whether this process synced the service's log into the team archive
   * ('syncer'), left it to the lease's holder ('reader'), or synced alone, the server unreachable
   * ('local'); the events the cache took from the archive, and the sentence that says so.
   */
  team: z
    .object({
      role: z.enum(['syncer', 'reader', 'local']),
      holder: z.string().nullable(),
      filled: z.number().int(),
      note: z.string(),
    })
    .optional(),
});

export const importRejectSchema = z.object({ line: z.number().int(), item: z.number().int(), reason: z.string() });
export const importReportSchema = z.object({
  path: z.string(),
  format: z.enum(['ndjson', 'json', 'csv']),
  items: z.number().int(),
  accepted: z.number().int(),
  duplicates: z.number().int(),
  rejected: z.number().int(),
  /** The first rejections with their line (and item/row number); `rejected` counts all. */
  rejects: z.array(importRejectSchema),
  /** The file ended mid-item or its structure broke: rows before it were kept, nothing after. */
  fatal: z.string().nullable(),
  warnings: z.array(z.string()),
  /**
   * Interrupted (Ctrl-C) while a staged load held rows back to move them in by date, or while it
   * waited for another process to let go of the cache to copy rows in: items read and checked but
   * not added, which importing the file again adds. Absent when there are none.
   */
  notAdded: z.number().int().optional(),
  /**
   * Stopped (Ctrl-C, audit.importCancel) before the whole file was read and added (importing it again
   * adds the rest). Absent when it completed, a stop that came during its last step included.
   */
  interrupted: z.literal(true).optional(),
});

export const auditExportRequestSchema = z
  .object({
    format: z.enum(['csv', 'ndjson']),
    filters: auditFiltersSchema.default({}),
    sort: auditSortSchema.default({ field: 'date', dir: 'desc' }),
  })
  .strict();

export const auditCommands = {
  'audit.sync': command(
    z.object({}).strict(),
    syncReportSchema,
    'Pull new audit events from the API into the cache (incremental, resumable, within the daily budget). Stopped (audit.syncCancel), it answers outcome stopped without an error. Progress comes as audit.syncProgress.',
  ),
  'audit.syncCancel': command(
    empty,
    z.object({ stopped: z.boolean() }),
    'Stop the running sync after the page in hand (at once while it waits to retry): the events synced so far stay, its report says stopped, and the next sync goes on from where it stopped; every window hears audit.syncStopping at once. stopped: false when no sync was running.',
  ),
  'audit.status': command(
    empty,
    auditStatusSchema,
    'How fresh the cache is: counts, last sync, budget left, last error.',
  ),
  'audit.import': command(
    z.object({ paths: z.array(z.string().min(1)).min(1).max(100) }).strict(),
    z.object({ reports: z.array(importReportSchema) }),
    'Import exported audit logs (JSON, NDJSON, CSV); existing events are never changed. One at a time: asked while one runs, it fails (conflict). Progress comes as audit.importProgress.',
  ),
  'audit.importCancel': command(
    empty,
    z.object({ stopped: z.boolean() }),
    'Stop the running import after the batch in hand: the events added so far stay, its reports say interrupted, the files after are not read; every window hears audit.importStopping at once. stopped: false when no import was running.',
  ),
  'audit.query': command(
    auditQueryRequestSchema,
    auditQueryResponseSchema,
    'One page of cached events matching the filters.',
  ),
  'audit.event': command(
    z.object({ eventId: z.string().min(1).max(500) }).strict(),
    auditEventDetailSchema.nullable(),
    'One event with all its fields and its related events.',
  ),
  'audit.facets': command(
    z
      .object({ filters: auditFiltersSchema.default({}), limit: z.number().int().min(1).max(1000).default(50) })
      .strict(),
    auditFacetsSchema,
    'Counts by event type and by member (each ignores its own filter).',
  ),
  'audit.timeline': command(
    z.object({ filters: auditFiltersSchema.default({}), bucket: z.enum(['hour', 'day']) }).strict(),
    auditTimelineSchema,
    'Events per hour or day for the chart.',
  ),
  'audit.export': command(
    auditExportRequestSchema,
    z.object({ path: z.string(), rows: z.number().int() }),
    'Write the filtered view to a CSV or NDJSON file the app names, in its folder for saved files (SAVED_FILES_RULE).',
  ),
};

/**
 * The end of the app's import and sync, told to every window: only the one that asked gets the
 * answer, and a window reloaded meanwhile would otherwise show the task running for ever.
 * `error`: why it failed (then no reports, no report).
 */
export const importDoneSchema = z.object({
  paths: z.array(z.string()),
  reports: z.array(importReportSchema),
  error: z.string().nullable(),
});
export const syncDoneSchema = z.object({ report: syncReportSchema.nullable(), error: z.string().nullable() });

export const auditEvents = {
  'audit.syncProgress': syncProgressSchema,
  /**
   * Stop was asked for the app's sync or import (by any window, or Ctrl-C): sent at once, not with
   * the next progress, so every window showing it says it is stopping (audit.status's `stopping`).
   */
  'audit.syncStopping': empty,
  'audit.syncDone': syncDoneSchema,
  'audit.importProgress': importProgressSchema,
  'audit.importStopping': empty,
  'audit.importDone': importDoneSchema,
};

export type AuditStatus = z.infer<typeof auditStatusSchema>;
export type SyncReport = z.infer<typeof syncReportSchema>;
export type SyncProgress = z.infer<typeof syncProgressSchema>;
export type SyncErrorKind = z.infer<typeof syncErrorKindSchema>;
export type ImportReport = z.infer<typeof importReportSchema>;
export type ImportProgress = z.infer<typeof importProgressSchema>;
export type ImportDone = z.infer<typeof importDoneSchema>;
export type SyncDone = z.infer<typeof syncDoneSchema>;
export type Running<P> = { progress: P | null; stopping: boolean };
export type ImportReject = z.infer<typeof importRejectSchema>;
export type AuditQueryRequest = z.input<typeof auditQueryRequestSchema>;
export type AuditQueryResponse = z.infer<typeof auditQueryResponseSchema>;
export type AuditSort = z.infer<typeof auditSortSchema>;
export type AuditEventDetail = z.infer<typeof auditEventDetailSchema>;
export type AuditFacets = z.infer<typeof auditFacetsSchema>;
export type AuditTimeline = z.infer<typeof auditTimelineSchema>;
