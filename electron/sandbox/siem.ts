import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FaultState } from './faults.ts';

/**
 * Stand-ins for the SIEMs the audit forwarder delivers to: Splunk's HTTP Event Collector and the
 * `_bulk` API of OpenSearch and Elasticsearch. Each checks the protocol as the real server states
 * it (Splunk's HEC reference, the Elasticsearch bulk API) and keeps what arrived, by event_id, for
 * tests to read under `/__sandbox/siem`.
 */

/** The HEC token the stand-in accepts (`Authorization: Splunk <token>`). */
export const SANDBOX_HEC_TOKEN = 'sandbox-hec-token';
/** Splunk's documented limits are configurable; the stand-in refuses more than the forwarder may send. */
export const MAX_SIEM_BODY_BYTES = 8 * 1024 * 1024;
const ENVELOPE_KEYS = new Set(['time', 'host', 'source', 'sourcetype', 'index', 'event', 'fields']);
const KEPT_ENVELOPES = 1000;

interface Arrivals {
  requests: number;
  /** Requests refused whole (faults, bad token, bad body). */
  refusedRequests: number;
  /** Events accepted, copies included. */
  events: number;
  /** Events accepted again under an event_id already held. */
  duplicates: number;
  /** Events refused one by one (siemRefuse). */
  refusedEvents: number;
  maxBatch: number;
  maxBytes: number;
}

const arrivals = (): Arrivals => ({
  requests: 0,
  refusedRequests: 0,
  events: 0,
  duplicates: 0,
  refusedEvents: 0,
  maxBatch: 0,
  maxBytes: 0,
});

export class SiemStandIns {
  hec = arrivals();
  bulk = arrivals();
  /** event_ids the HEC stand-in indexed, and the first envelopes as received. */
  hecIds = new Set<string>();
  hecEnvelopes: unknown[] = [];
  hecAcks = { issued: 0, polled: 0, confirmed: 0 };
  /** Per index, the documents by _id. */
  indices = new Map<string, Set<string>>();
  private nextAck = 0;
  /** ackId -> times polled; an ack is confirmed from its second poll (the first finds it pending). */
  private pendingAcks = new Map<string, Map<number, number>>();

  reset(): void {
    this.hec = arrivals();
    this.bulk = arrivals();
    this.hecIds.clear();
    this.hecEnvelopes = [];
    this.hecAcks = { issued: 0, polled: 0, confirmed: 0 };
    this.indices.clear();
    this.pendingAcks.clear();
  }

  issueAck(channel: string, lost = false): number {
    const id = this.nextAck++;
    let acks = this.pendingAcks.get(channel);
    if (!acks) this.pendingAcks.set(channel, (acks = new Map()));
    if (!lost) acks.set(id, 0);
    this.hecAcks.issued++;
    return id;
  }

  pollAck(channel: string, id: number): boolean {
    this.hecAcks.polled++;
    const acks = this.pendingAcks.get(channel);
    const polls = acks?.get(id);
    if (acks === undefined || polls === undefined) return false;
    if (polls === 0) {
      acks.set(id, 1);
      return false;
    }
    acks.delete(id);
    this.hecAcks.confirmed++;
    return true;
  }

  summary() {
    return {
      hec: { ...this.hec, unique: this.hecIds.size, acks: this.hecAcks },
      bulk: {
        ...this.bulk,
        indices: Object.fromEntries([...this.indices].map(([name, ids]) => [name, ids.size])),
      },
    };
  }
}

/** Splits concatenated JSON texts (HEC's batch format: objects one after another, any whitespace between). */
export function splitConcatenated(body: string): string[] | { badAt: number } {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (depth++ === 0) start = i;
    } else if (c === 125 || c === 93) {
      if (--depth === 0) out.push(body.slice(start, i + 1));
      if (depth < 0) return { badAt: out.length };
    } else if (depth === 0 && c !== 32 && c !== 10 && c !== 13 && c !== 9) return { badAt: out.length };
  }
  return depth === 0 ? out : { badAt: out.length };
}

const hecAnswer = (reply: FastifyReply, status: number, body: Record<string, unknown>, headers = {}) =>
  reply.code(status).headers(headers).type('application/json').send(body);

/** Why a HEC envelope is refused (Splunk's code and text), or null. */
function envelopeProblem(v: unknown): { code: number; text: string } | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { code: 6, text: 'Invalid data format' };
  const env = v as Record<string, unknown>;
  if (Object.keys(env).some((k) => !ENVELOPE_KEYS.has(k))) return { code: 6, text: 'Invalid data format' };
  if (!('event' in env)) return { code: 12, text: 'Event field is required' };
  if (env.event === '' || env.event === null) return { code: 13, text: 'Event field cannot be blank' };
  if (env.time !== undefined && !(typeof env.time === 'number' || /^\d+(\.\d+)?$/.test(String(env.time))))
    return { code: 6, text: 'Invalid data format' };
  for (const k of ['host', 'source', 'sourcetype', 'index'])
    if (env[k] !== undefined && typeof env[k] !== 'string') return { code: 6, text: 'Invalid data format' };
  if (env.fields !== undefined && (typeof env.fields !== 'object' || env.fields === null))
    return { code: 6, text: 'Invalid data format' };
  return null;
}

const eventIdOf = (doc: unknown): string | null => {
  const id = (doc as { event_id?: unknown } | null)?.event_id;
  return typeof id === 'string' ? id : null;
};

function refusedByFault(faults: FaultState, reply: FastifyReply, kind: 'hec' | 'bulk'): boolean {
  const status = faults.siemDraw();
  if (status === null) return false;
  const headers = { 'Retry-After': String(faults.current.retryAfterSec) };
  if (kind === 'hec')
    hecAnswer(
      reply,
      status,
      status === 429 ? { text: 'Too many requests', code: 9 } : { text: 'Server is busy', code: 9 },
      headers,
    );
  else
    reply
      .code(status)
      .headers({ ...headers, 'X-Elastic-Product': 'Elasticsearch' })
      .type('application/json')
      .send({
        error: {
          type: status === 429 ? 'es_rejected_execution_exception' : 'unavailable_shards_exception',
          reason: status === 429 ? 'rejected execution of coordinating operation' : 'primary shard is not active',
        },
        status,
      });
  return true;
}

function handleHec(siem: SiemStandIns, faults: FaultState, req: FastifyRequest, reply: FastifyReply) {
  const a = siem.hec;
  a.requests++;
  const refuse = (status: number, body: Record<string, unknown>) => {
    a.refusedRequests++;
    return hecAnswer(reply, status, body);
  };
  const auth = req.headers.authorization;
  if (!auth) return refuse(401, { text: 'Token is required', code: 2 });
  const m = /^Splunk (.+)$/.exec(auth);
  if (!m) return refuse(401, { text: 'Invalid authorization', code: 3 });
  if (m[1] !== SANDBOX_HEC_TOKEN) return refuse(403, { text: 'Invalid token', code: 4 });
  const query = req.query as Record<string, string | undefined>;
  const channel = (req.headers['x-splunk-request-channel'] as string | undefined) ?? query.channel;
  if (faults.current.hecAck && !channel) return refuse(400, { text: 'Data channel is missing', code: 10 });
  if (refusedByFault(faults, reply, 'hec')) return void a.refusedRequests++;
  const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  a.maxBytes = Math.max(a.maxBytes, Buffer.byteLength(body));
  if (!body.trim()) return refuse(400, { text: 'No data', code: 5 });
  const parts = splitConcatenated(body);
  if (!Array.isArray(parts))
    return refuse(400, { text: 'Invalid data format', code: 6, 'invalid-event-number': parts.badAt });
  a.maxBatch = Math.max(a.maxBatch, parts.length);
  const envelopes: Record<string, unknown>[] = [];
  for (let i = 0; i < parts.length; i++) {
    let env: unknown;
    try {
      env = JSON.parse(parts[i]);
    } catch {
      return refuse(400, { text: 'Invalid data format', code: 6, 'invalid-event-number': i });
    }
    const problem = envelopeProblem(env);
    const id = eventIdOf((env as { event?: unknown })?.event);
    const refused = !problem && id !== null && faults.current.siemRefuse.includes(id);
    if (problem || refused) {
      // Splunk indexes the events before the one it cannot read, then answers 400 naming it.
      for (const e of envelopes) keepHec(siem, e);
      if (refused) a.refusedEvents++;
      return refuse(400, { ...(problem ?? { text: 'Invalid data format', code: 6 }), 'invalid-event-number': i });
    }
    envelopes.push(env as Record<string, unknown>);
  }
  // A batch lost before indexing (hecAckLoss) is answered as taken, and its ack never confirmed.
  const lost = faults.current.hecAck && faults.losesAck();
  if (!lost) for (const e of envelopes) keepHec(siem, e);
  const answer: Record<string, unknown> = { text: 'Success', code: 0 };
  if (faults.current.hecAck && channel) answer.ackId = siem.issueAck(channel, lost);
  return hecAnswer(reply, 200, answer);
}

function keepHec(siem: SiemStandIns, env: Record<string, unknown>): void {
  siem.hec.events++;
  const id = eventIdOf(env.event) ?? `(no event_id ${siem.hec.events})`;
  if (siem.hecIds.has(id)) siem.hec.duplicates++;
  else siem.hecIds.add(id);
  if (siem.hecEnvelopes.length < KEPT_ENVELOPES) siem.hecEnvelopes.push(env);
}

function handleAck(siem: SiemStandIns, faults: FaultState, req: FastifyRequest, reply: FastifyReply) {
  const query = req.query as Record<string, string | undefined>;
  const channel = (req.headers['x-splunk-request-channel'] as string | undefined) ?? query.channel;
  if (req.headers.authorization !== `Splunk ${SANDBOX_HEC_TOKEN}`)
    return hecAnswer(reply, 403, { text: 'Invalid token', code: 4 });
  if (!faults.current.hecAck) return hecAnswer(reply, 400, { text: 'ACK is disabled', code: 14 });
  if (!channel) return hecAnswer(reply, 400, { text: 'Data channel is missing', code: 10 });
  let acks: unknown;
  try {
    acks = (JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '') as { acks?: unknown }).acks;
  } catch {
    acks = undefined;
  }
  if (!Array.isArray(acks) || !acks.every((x) => Number.isInteger(x)))
    return hecAnswer(reply, 400, { text: 'Invalid data format', code: 6 });
  return hecAnswer(reply, 200, {
    acks: Object.fromEntries(acks.map((id: number) => [String(id), siem.pollAck(channel, id)])),
  });
}

type BulkItem = Record<string, { _index: string; _id: string; status: number; [k: string]: unknown }>;

function handleBulk(
  siem: SiemStandIns,
  faults: FaultState,
  req: FastifyRequest<{ Params: { index?: string } }>,
  reply: FastifyReply,
) {
  const a = siem.bulk;
  a.requests++;
  const bad = (reason: string) => {
    a.refusedRequests++;
    return reply
      .code(400)
      .header('X-Elastic-Product', 'Elasticsearch')
      .type('application/json')
      .send({ error: { type: 'illegal_argument_exception', reason }, status: 400 });
  };
  const type = String(req.headers['content-type'] ?? '');
  if (!/ndjson|json/.test(type)) return bad(`Content-Type header [${type}] is not supported`);
  if (refusedByFault(faults, reply, 'bulk')) return void a.refusedRequests++;
  const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  a.maxBytes = Math.max(a.maxBytes, Buffer.byteLength(body));
  if (body.length && !body.endsWith('\n')) return bad('The bulk request must be terminated by a newline [\\n]');
  const lines = body.split('\n').slice(0, -1);
  if (!lines.length) return bad('request body is required');
  const items: BulkItem[] = [];
  let errors = false;
  for (let i = 0; i < lines.length; i += 2) {
    let action: Record<string, { _index?: string; _id?: string }>;
    try {
      action = JSON.parse(lines[i]) as typeof action;
    } catch {
      return bad(`Malformed action/metadata line [${i + 1}], expected START_OBJECT`);
    }
    const [op] = Object.keys(action ?? {});
    if (op !== 'create' && op !== 'index')
      return bad(`Malformed action/metadata line [${i + 1}], expected create or index`);
    const meta = action[op];
    const index = meta._index ?? req.params.index;
    if (!index) return bad(`Validation Failed: 1: index is missing;`);
    if (i + 1 >= lines.length) return bad(`The bulk request must be terminated by a newline [\\n]`);
    let doc: unknown;
    try {
      doc = JSON.parse(lines[i + 1]);
    } catch {
      doc = undefined;
    }
    const id = meta._id ?? `auto-${a.events}`;
    const item = (status: number, extra: Record<string, unknown>) => {
      if (status >= 300) errors = true;
      items.push({ [op]: { _index: index, _id: id, status, ...extra } });
    };
    const eventId = eventIdOf(doc);
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      a.refusedEvents++;
      item(400, { error: { type: 'mapper_parsing_exception', reason: 'failed to parse' } });
      continue;
    }
    if (eventId !== null && faults.current.siemRefuse.includes(eventId)) {
      a.refusedEvents++;
      item(400, {
        error: { type: 'document_parsing_exception', reason: `[1:2] failed to parse: event ${eventId} refused` },
      });
      continue;
    }
    let docs = siem.indices.get(index);
    if (!docs) siem.indices.set(index, (docs = new Set()));
    a.events++;
    if (docs.has(id)) {
      a.duplicates++;
      if (op === 'create') {
        item(409, {
          error: {
            type: 'version_conflict_engine_exception',
            reason: `[${id}]: version conflict, document already exists (current version [1])`,
          },
        });
        continue;
      }
      item(200, { result: 'updated', _version: 2 });
      continue;
    }
    docs.add(id);
    item(201, { result: 'created', _version: 1 });
  }
  a.maxBatch = Math.max(a.maxBatch, items.length);
  return reply
    .code(200)
    .header('X-Elastic-Product', 'Elasticsearch')
    .type('application/json')
    .send({ took: 1, errors, items });
}

/** Registers the HEC and `_bulk` stand-ins, and `/__sandbox/siem` to read what arrived. */
export function registerSiem(app: FastifyInstance, deps: { faults: FaultState; siem: SiemStandIns }): void {
  const { faults, siem } = deps;
  app.register(async (s) => {
    s.removeAllContentTypeParsers();
    s.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_SIEM_BODY_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    for (const url of ['/services/collector', '/services/collector/event', '/services/collector/event/1.0'])
      s.post(url, (req, reply) => handleHec(siem, faults, req, reply));
    s.post('/services/collector/ack', (req, reply) => handleAck(siem, faults, req, reply));
    // OpenSearch's client sends PUT, Elasticsearch's POST: the API takes both.
    for (const url of ['/_bulk', '/:index/_bulk'])
      s.route({
        method: ['POST', 'PUT'],
        url,
        handler: (req, reply) => handleBulk(siem, faults, req as FastifyRequest<{ Params: { index?: string } }>, reply),
      });
    // What a client may ask first (cluster info).
    s.get('/', async (_req, reply) =>
      reply.header('X-Elastic-Product', 'Elasticsearch').send({
        name: 'sandbox',
        cluster_name: 'sandbox',
        version: { number: '8.15.0' },
        tagline: 'You Know, for Search',
      }),
    );
    s.get('/__sandbox/siem', async () => siem.summary());
    s.get('/__sandbox/siem/hec/envelopes', async () => ({ envelopes: siem.hecEnvelopes }));
    s.get('/__sandbox/siem/hec/ids', async () => ({ ids: [...siem.hecIds] }));
    s.get('/__sandbox/siem/bulk/:index/ids', async (req: FastifyRequest<{ Params: { index: string } }>) => ({
      ids: [...(siem.indices.get(req.params.index) ?? [])],
    }));
    s.post('/__sandbox/siem/reset', async () => {
      siem.reset();
      return siem.summary();
    });
  });
}
