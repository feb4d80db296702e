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
      index: name.optional(),
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
