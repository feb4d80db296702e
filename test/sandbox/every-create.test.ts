// Every create of the reference against one Sandbox over real HTTP: a minimal body and a full one
// built from the schema alone are taken and end with a result of the kind the reference says; an
// unknown field, a missing required one, a value out of bounds and an unreadable media input are
// each refused naming the field. The synchronous creates answer in their documented shapes.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answersAtOnce,
  bodyContentTypeOf,
  OPERATIONS,
  problemsOf,
  requestProblems,
  type JsonSchema,
  type Operation,
} from '../../shared/official/index.ts';
import { AUDIO_ASSET, VIDEO_ASSET } from '../../electron/sandbox/render.ts';
import { uploadTo } from '../sandbox-upload.ts';
import { bytesOf, start, testPng, type Answer } from './helpers.ts';
import { bodyFor, mediaKindOfName, outOfBounds, type MediaValues } from './schema-bodies.ts';

const CREATES = OPERATIONS.filter(
  (op) =>
    op.method === 'POST' && op.generates && !op.path.includes('{') && !/^\/v1\/ai\/(uploads|loras)\//.test(op.path),
);
/** The by-id templates of the reference, without their `/{task-id}`. */
const BY_IDS = OPERATIONS.filter((op) => op.method === 'GET' && op.path.endsWith('/{task-id}')).map((op) =>
  op.path.slice(0, -'/{task-id}'.length),
);
const covers = (prefix: string, path: string) =>
  path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}-`);
/** Where the reference says a create's task is read: its most specific covering by-id, else its own path. */
const byIdOf = (path: string) => BY_IDS.filter((b) => covers(b, path)).sort((a, b) => b.length - a.length)[0] ?? path;

/** Fields the description requires in words, not in its schema. */
const REQUIRED_IN_WORDS: Record<string, string> = { '/v1/ai/beta/remove-background': 'image_url' };
/** Fields a body built from the schema alone cannot fill, each with why (left out of the full body). */
const NOT_FROM_THE_SCHEMA: Record<string, { field: string; why: string }> = {
  '/v1/ai/mystic': { field: 'styling', why: "names LoRAs of the caller's catalogue (GET /v1/ai/loras)" },
};

/** Operations of the reference the Sandbox does not serve yet, each with why. */
const NOT_SERVED: Record<string, string> = {};
/** Creates whose answer schema the Sandbox answers otherwise, as their examples do. */
const ANSWER_QUIRKS: Record<string, string> = {
  '/v1/ai/beta/text-to-image/reimagine-flux': 'its schema leaves out the `data` wrapper its example has',
  '/v1/ai/image-style-transfer': 'its schema says `task_status` where its example says `status`',
};

let ctx: Awaited<ReturnType<typeof start>>;
let hooks: Server;
let media: MediaValues;

beforeAll(async () => {
  ctx = await start({ taskDurationMs: 60_000 });
  hooks = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
  const png = await testPng(1024, 1024);
  const up = (bytes: Uint8Array, type: string) => uploadTo(ctx.sb.url, bytes, type).then((u) => u.url);
  media = {
    url: {
      image: await up(png, 'image/png'),
      video: await up(readFileSync(VIDEO_ASSET), 'video/mp4'),
      audio: await up(readFileSync(AUDIO_ASSET), 'audio/mpeg'),
    },
    imageBase64: png.toString('base64'),
    webhook: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`,
  };
}, 60_000);
afterAll(async () => {
  await ctx.sb.close();
  hooks.close();
});

/** A create as its description says it travels: JSON, or background removal's form. */
async function send(op: Operation, body: Record<string, unknown>): Promise<Answer> {
  if (bodyContentTypeOf(op) === 'application/json') return ctx.api.post(op.path, body);
  const res = await fetch(ctx.sb.url + op.path, {
    method: 'POST',
    headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString(),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

const named = (a: Answer) => (a.body?.invalid_params ?? []).map((p: { field: string }) => p.field);

/** A full body the reference takes: fields it refuses together (alternatives, stated rules) dropped one by one. */
function takenFull(op: Operation, full: Record<string, unknown>, required: Set<string>) {
  const dropped: string[] = [];
  for (let i = 0; i < 20; i++) {
    const problems = requestProblems(op, full).filter((p) => !required.has(p.field.split('.')[0]));
    if (!problems.length) break;
    const field = problems[0].field.split('.')[0];
    if (!(field in full)) break;
    delete full[field];
    dropped.push(field);
  }
  return dropped;
}

/** What a downloaded result is, by its first bytes. */
async function kindOfFile(bytes: Buffer): Promise<string> {
  if (bytes.subarray(4, 8).toString('latin1') === 'ftyp') return 'video';
  if (bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0))
    return 'audio';
  const meta = await sharp(bytes)
    .metadata()
    .catch(() => null);
  return meta && ['png', 'jpeg', 'webp'].includes(meta.format!) ? 'image' : 'unknown';
}

interface Made {
  op: Operation;
  mode: 'min' | 'full';
  taskId: string;
}

describe('every operation of the reference, over HTTP against one Sandbox', () => {
  it('has a route: none answers the 404 of a path the Sandbox does not serve', async () => {
    const unrouted: string[] = [];
    for (const op of OPERATIONS) {
      const path = op.path
        .replace('{task-id}', '00000000-0000-4000-8000-000000000000')
        .replace('{format}', 'png')
        .replace(/\{[a-z-]+\}/g, 'x1');
      const a = op.method === 'POST' ? await ctx.api.post(path, {}) : await ctx.api.get(path);
      if (a.status === 404 && a.body?.message === 'Not found') unrouted.push(`${op.method} ${op.path}`);
    }
    console.log(
      `every operation: ${OPERATIONS.length - unrouted.length} of ${OPERATIONS.length} routed; not served: ` +
        Object.entries(NOT_SERVED)
          .map(([op, why]) => `${op} (${why})`)
          .join('; '),
    );
    expect(unrouted.sort()).toEqual(Object.keys(NOT_SERVED).sort());
  });
});

describe('every create of the reference, over HTTP against one Sandbox', () => {
  it('takes a minimal and a full body, refuses what breaks the schema by name, and ends with a result of its kind', async () => {
    const made: Made[] = [];
    const skipped: string[] = [];
    const failures: string[] = [];
    const counts = { answers: 0, creates: 0, min: 0, full: 0, unknown: 0, missing: 0, bounds: 0, media: 0, atOnce: 0 };
    const check = (ok: boolean, what: string) => {
      if (!ok) failures.push(what);
    };
    const one = async (op: Operation) => {
      counts.creates++;
      const schema = (op.body ?? { type: 'object', properties: {} }) as JsonSchema;
      const min = bodyFor(schema, 'min', media);
      const full = bodyFor(schema, 'full', media);
      const inWords = REQUIRED_IN_WORDS[op.path];
      if (inWords) min[inWords] = full[inWords];
      // A stated rule "at least one of" makes its first field required (a prompt, or shots).
      for (const rule of op.rules ?? []) if (rule.kind === 'anyOf') min[rule.fields[0]] = full[rule.fields[0]];
      const unfillable = NOT_FROM_THE_SCHEMA[op.path];
      if (unfillable) {
        delete full[unfillable.field];
        skipped.push(`${op.path} full: left out ${unfillable.field}, which ${unfillable.why}`);
      }
      const required = new Set(Object.keys(min));
      const localMin = requestProblems(op, min);
      if (localMin.length) return void skipped.push(`${op.path}: no minimal body built (${JSON.stringify(localMin)})`);
      const dropped = takenFull(op, full, required);
      for (const [mode, body] of [
        ['min', min],
        ['full', full],
      ] as const) {
        if (mode === 'full' && requestProblems(op, body).length) {
          skipped.push(`${op.path} full: ${JSON.stringify(requestProblems(op, body))}`);
          continue;
        }
        const a = await send(op, body);
        check(a.status === 200, `${op.path} ${mode}: ${a.status} ${a.text.slice(0, 300)}`);
        if (a.status !== 200) continue;
        counts[mode]++;
        if (answersAtOnce(op)) {
          counts.atOnce++;
          const problems = problemsOf(op.responses!['200'].schema!, a.body);
          check(problems.length === 0, `${op.path} ${mode}: answer off its schema ${JSON.stringify(problems)}`);
        } else {
          check(a.body?.data?.status === 'CREATED', `${op.path} ${mode}: not a CREATED task: ${a.text.slice(0, 200)}`);
          made.push({ op, mode, taskId: a.body.data.task_id });
          const schema200 = op.responses?.['200']?.schema;
          if (mode === 'min' && schema200 && Object.keys(schema200).length && !ANSWER_QUIRKS[op.path]) {
            const problems = problemsOf(schema200, a.body, true);
            check(problems.length === 0, `${op.path}: task answer off its schema ${JSON.stringify(problems)}`);
            counts.answers++;
          }
        }
      }
      if (dropped.length) skipped.push(`${op.path} full: left out ${dropped.join(', ')} (refused together)`);

      const unknown = await send(op, { ...min, not_a_parameter: 'x' });
      check(
        unknown.status === 400 && named(unknown).includes('not_a_parameter'),
        `${op.path}: unknown field answered ${unknown.status} ${named(unknown)}`,
      );
      counts.unknown++;
      // A field every alternative of the body needs (one another alternative does without is not missing).
      const first = Object.keys(min).find((k) => {
        const { [k]: _gone, ...rest } = min;
        return requestProblems(op, rest).length > 0 || k === inWords;
      });
      if (first) {
        const { [first]: _gone, ...rest } = min;
        const missing = await send(op, rest);
        check(
          missing.status === 400 && named(missing).some((f: string) => f === first || f.startsWith(`${first}.`)),
          `${op.path}: missing ${first} answered ${missing.status} ${named(missing)}`,
        );
        counts.missing++;
      }
      const bound = outOfBounds(schema, full);
      if (bound) {
        const past = await send(op, { ...full, [bound.field]: bound.value });
        check(
          past.status === 400 && named(past).includes(bound.field),
          `${op.path}: ${bound.field} out of bounds answered ${past.status} ${named(past)}`,
        );
        counts.bounds++;
      }
      const mediaField = Object.keys(min).find((k) => typeof min[k] === 'string' && mediaKindOfName(k));
      if (mediaField) {
        const isUrl = String(min[mediaField]).startsWith('http');
        const bad = isUrl ? `${ctx.sb.url}/uploads/upl_gone?expires=1&signature=x` : 'bm90IGEgbWVkaWEgZmlsZSBhdCBhbGw=';
        const unreadable = await send(op, { ...min, [mediaField]: bad });
        check(
          unreadable.status === 400 && named(unreadable).includes(mediaField),
          `${op.path}: unreadable ${mediaField} answered ${unreadable.status} ${unreadable.text.slice(0, 200)}`,
        );
        counts.media++;
      }
    };
    for (let i = 0; i < CREATES.length; i += 6) await Promise.all(CREATES.slice(i, i + 6).map(one));

    await ctx.api.control('tasks/finish', {});
    const kinds: Record<string, number> = {};
    for (let i = 0; i < made.length; i += 8)
      await Promise.all(
        made.slice(i, i + 8).map(async ({ op, mode: m, taskId }) => {
          const at = `${op.path} ${m}`;
          const got = await ctx.api.get(`${byIdOf(op.path)}/${taskId}`);
          const data = got.body?.data;
          check(
            got.status === 200 && data?.status === 'COMPLETED',
            `${at}: by id ${got.status} ${got.text.slice(0, 200)}`,
          );
          const first = data?.generated?.[0];
          if (typeof first !== 'string') return void failures.push(`${at}: nothing generated`);
          if (op.generates === 'text') {
            check(!first.startsWith('http') && first.length > 20, `${at}: text result ${first}`);
            kinds.text = (kinds.text ?? 0) + 1;
            return;
          }
          const file = await bytesOf(first);
          const kind = file.status === 200 ? await kindOfFile(file.bytes) : `HTTP ${file.status}`;
          check(kind === op.generates, `${at}: result is ${kind}, the reference says ${op.generates}`);
          kinds[kind] = (kinds[kind] ?? 0) + 1;
        }),
      );
    console.log(
      `every create: ${counts.creates} operations; taken ${counts.min} minimal and ${counts.full} full bodies ` +
        `(${counts.atOnce} of them answered at once; ${counts.answers} task answers held to their schema); refused ${counts.unknown} unknown fields, ${counts.missing} missing, ` +
        `${counts.bounds} out of bounds, ${counts.media} unreadable media; results ${JSON.stringify(kinds)}\n` +
        `skipped or trimmed (${skipped.length}):\n  ${skipped.join('\n  ')}\n` +
        `answers not held to their schema: ${Object.entries(ANSWER_QUIRKS)
          .map(([p, why]) => `${p} (${why})`)
          .join('; ')}`,
    );
    expect(failures).toEqual([]);
    expect(counts.creates).toBeGreaterThan(140);
    expect(counts.min).toBe(counts.creates);
  }, 300_000);
});
