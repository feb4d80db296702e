import { z } from 'zod';
import { command, empty } from './define.ts';
import { SINK_KINDS, sinkSchema } from '../audit-sinks.ts';

/**
 * Forwarding the cached audit log to SIEM sinks (Splunk HEC, OpenSearch/Elasticsearch `_bulk`,
 * gzipped NDJSON files): from the local archive only, never by calling the service again.
 */

export const sinkStatusSchema = z.object({
  id: z.string(),
  kind: z.enum(SINK_KINDS),
  /** Its URL (and index) or folder. */
  target: z.string(),
  enabled: z.boolean(),
  /** Whether its token or password is stored (files need none). */
  secretSet: z.boolean(),
  state: z.enum(['up-to-date', 'behind', 'failing', 'disabled']),
  /** Cached events it has still to receive. */
  behind: z.number().int(),
  delivered: z.number().int(),
  /** Events it refused (4xx for that event alone), kept with the reason. */
  refused: z.number().int(),
  /** The last event delivered in the archive's order (date, event_id). */
  watermark: z.object({ date: z.string(), eventId: z.string() }).nullable(),
  failingSince: z.string().nullable(),
  lastError: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  /** Another process forwarding this sink now (its lease), or null. */
  heldBy: z.object({ pid: z.number().int(), host: z.string() }).nullable(),
});

export const forwardReportSchema = z.object({
  sinkId: z.string(),
  /** busy: another process forwards this sink now; nothing was sent (error names its pid). */
  outcome: z.enum(['complete', 'failed', 'stopped', 'busy']),
  delivered: z.number().int(),
  refused: z.number().int(),
  requests: z.number().int(),
  retries: z.number().int(),
  error: z.string().nullable(),
});

export const forwardStatusSchema = z.object({
  sinks: z.array(sinkStatusSchema),
  forwardAfterSync: z.boolean(),
  /** A forward runs in this process now. */
  running: z.boolean(),
});

export const deadLetterSchema = z.object({ eventId: z.string(), date: z.string(), reason: z.string() });

export const auditForwardCommands = {
  'audit.forward': command(
    z.object({ sinkId: z.string().min(1).max(40).optional() }).strict(),
    z.object({ reports: z.array(forwardReportSchema) }),
    'Deliver the cached audit events each enabled sink (or the one named) has not received yet, from its watermark; at least once, each event keyed by its event_id.',
  ),
  'audit.forwardStatus': command(
    empty,
    forwardStatusSchema,
    'Each sink: up to date, behind by N events, failing since when and why.',
  ),
  'audit.sinkSave': command(
    z
      .object({
        sink: sinkSchema,
        /** Its HEC token, API key or password, stored in the OS keychain; absent: the stored one stays. */
        secret: z.string().min(1).max(4096).optional(),
      })
      .strict(),
    forwardStatusSchema,
    'Add a sink or change one (by id); its secret goes to the keychain, never to the settings file.',
  ),
  'audit.sinkRemove': command(
    z.object({ id: z.string().min(1).max(40) }).strict(),
    forwardStatusSchema,
    'Remove a sink, its watermark, its refused events and its stored secret.',
  ),
  'audit.sinkRefused': command(
    z.object({ id: z.string().min(1).max(40), limit: z.number().int().min(1).max(1000).default(100) }).strict(),
    z.object({ events: z.array(deadLetterSchema) }),
    'The events a sink refused, with its reason.',
  ),
};

export type SinkStatus = z.infer<typeof sinkStatusSchema>;
export type ForwardStatus = z.infer<typeof forwardStatusSchema>;
export type ForwardReportData = z.infer<typeof forwardReportSchema>;
