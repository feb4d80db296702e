import { z } from 'zod';
import { isLoopbackUrl } from './loopback.ts';

/**
 * Where the audit forwarder delivers the cached audit log (electron/core/audit/forward): a Splunk
 * HTTP Event Collector, an OpenSearch or Elasticsearch cluster (`_bulk`), or a folder of gzipped
 * NDJSON files. A sink's token or password lives in the OS keychain, never here.
 */
export const SINK_KINDS = ['splunk-hec', 'opensearch', 'elasticsearch', 'file'] as const;
export type SinkKind = (typeof SINK_KINDS)[number];

export const SINK_ID_RE = /^[a-z0-9][a-z0-9-]{0,39}$/;
const sinkId = z
  .string()
  .regex(SINK_ID_RE, 'must be 1 to 40 lowercase letters, digits or -, starting with a letter or digit');
const serverUrl = z
  .string()
  .url('must be a URL')
  .refine((u) => u.startsWith('https://') || isLoopbackUrl(u), 'must be https:// (or http:// on 127.0.0.1)');
const name = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
/** Splunk's rule for index names. */
const splunkIndex = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,199}$/, 'must be a Splunk index name (lowercase letters, digits, _ -)');
const indexName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,199}$/, 'must be a lowercase index name (letters, digits, . _ -)');

export const sinkSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('splunk-hec'),
      id: sinkId,
      /** The collector's base URL (https://splunk.example.com:8088); the path is /services/collector/event. */
      url: serverUrl,
      host: name.optional(),
      source: name.default('mediadesk'),
      sourcetype: name.default('mediadesk:audit'),
      index: splunkIndex.optional(),
      enabled: z.boolean().default(true),
    })
    .strict(),
  z
    .object({
      kind: z.enum(['opensearch', 'elasticsearch']),
      id: sinkId,
      url: serverUrl,
      index: indexName.default('mediadesk-audit'),
      /** With a password in the keychain: basic authentication. Without: the keychain holds an API key (Elasticsearch). */
      username: name.optional(),
      enabled: z.boolean().default(true),
    })
    .strict(),
  z
    .object({
      kind: z.literal('file'),
      id: sinkId,
      /** A full path: files go under it as YYYY/MM/DD/HH/<timestamp>-<uuid>.json.gz. */
      folder: z.string().refine((d) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(d), 'must be a full path'),
      enabled: z.boolean().default(true),
    })
    .strict(),
]);
export type SinkConfig = z.output<typeof sinkSchema>;
export type SinkInput = z.input<typeof sinkSchema>;

export const sinksSchema = z
  .array(sinkSchema)
  .max(20, 'must be at most 20 sinks')
  .refine((list) => new Set(list.map((s) => s.id)).size === list.length, 'must not name one id twice');

/** Where a sink delivers, as shown to the person: its URL (and index) or folder. */
export function sinkTarget(s: SinkConfig): string {
  if (s.kind === 'file') return s.folder;
  if (s.kind === 'splunk-hec') return s.url;
  return `${s.url} (index ${s.index})`;
}

/** What the sink's keychain secret is called, by kind (a file sink has none). */
export const SINK_SECRET_LABEL: Record<SinkKind, string | null> = {
  'splunk-hec': 'HEC token',
  opensearch: 'Password',
  elasticsearch: 'API key (or the user’s password)',
  file: null,
};

const TEXT_FIELDS = ['id', 'url', 'index', 'host', 'source', 'sourcetype', 'username', 'folder'] as const;
/** A sink as a form holds it: every field text, empty for "not set". */
export type SinkDraft = { kind: SinkKind; enabled: boolean } & Record<(typeof TEXT_FIELDS)[number], string>;

export const emptyDraft = (kind: SinkKind): SinkDraft => ({
  kind,
  enabled: true,
  ...(Object.fromEntries(TEXT_FIELDS.map((f) => [f, ''])) as Record<(typeof TEXT_FIELDS)[number], string>),
});

export type SinkDraftField = (typeof TEXT_FIELDS)[number];

/** The fields each kind of sink takes, in the order the form shows them. */
export const DRAFT_FIELDS: Record<SinkKind, readonly SinkDraftField[]> = {
  'splunk-hec': ['id', 'url', 'index', 'source', 'sourcetype', 'host'],
  opensearch: ['id', 'url', 'index', 'username'],
  elasticsearch: ['id', 'url', 'index', 'username'],
  file: ['id', 'folder'],
};

/** The draft as audit.sinkSave takes it: the kind's fields only, trimmed, an empty optional one left out. */
export function sinkFromDraft(d: SinkDraft): SinkInput {
  const out: Record<string, unknown> = { kind: d.kind, enabled: d.enabled };
  for (const f of DRAFT_FIELDS[d.kind]) {
    const v = String(d[f]).trim();
    if (v !== '' || f === 'id' || f === 'url' || f === 'folder') out[f] = v;
  }
  return out as SinkInput;
}

/** A stored sink back into a form's draft. */
export function draftOf(s: SinkConfig): SinkDraft {
  const d = { ...emptyDraft(s.kind), enabled: s.enabled };
  for (const f of TEXT_FIELDS) if (f in s) d[f] = String((s as Record<string, unknown>)[f]);
  return d;
}

/**
 * Each field's problem (field name -> reason), by the same schema the core checks a save with;
 * `secret` when a Splunk sink has no token typed or stored. Empty: the draft can be saved.
 */
export function sinkDraftProblems(
  d: SinkDraft,
  secret: { typed: string; stored: boolean },
  /** Ids other sinks already have (adding: the new one must differ). */
  taken: readonly string[] = [],
): Record<string, string> {
  const problems: Record<string, string> = {};
  if (taken.includes(d.id.trim())) problems.id = `must differ from the other sinks' (${d.id.trim()} is taken)`;
  const r = sinkSchema.safeParse(sinkFromDraft(d));
  if (!r.success) for (const i of r.error.issues) problems[String(i.path[0] ?? 'kind')] ??= i.message;
  if (d.kind === 'splunk-hec' && !secret.stored && secret.typed.trim() === '')
    problems.secret = 'must be the HEC token the collector gave (it is kept in the keychain)';
  return problems;
}
