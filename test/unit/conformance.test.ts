import { describe, expect, it } from 'vitest';
import {
  basisOf,
  bodyFields,
  defaultOf,
  defaultsOf,
  DEFAULT_SLUGS,
  pathFields,
  placeholderFor,
  resolvePaths,
  RESULT_KINDS,
  TOOLS,
  validateRequest,
  type Field,
  type ToolEntry,
} from '../../shared/catalogue/index.ts';
import {
  answersAtOnce,
  bodyObject,
  findOperation,
  OPERATIONS,
  REFERENCE_FILES,
  RESTED,
  requestProblems,
  type JsonSchema,
  type Operation,
} from '../../shared/official/index.ts';
import { MODEL_SLUGS } from '../../shared/service-profile.ts';
import { bodyOf, readEnvelope } from '../../electron/core/api/tools.ts';
import { toInvalidParams } from '../../electron/core/api/client.ts';
import { creationOf } from '../../electron/core/creations/service.ts';
import { loraGroups } from '../../electron/core/loras.ts';
import { parseAppDefinition, parseAppList, parseRun } from '../../electron/core/apps/wire.ts';
import { parseDirectory, parseUsage } from '../../electron/core/analytics/wire.ts';
import { answersOf, type Answer } from './reference-answers.ts';

/**
 * The app's catalogue against the project's reference of the live service: every request the app
 * builds validates against the reference, and the two agree on names, enums and bounds.
 */

type Props = Record<string, JsonSchema>;

/** Every concrete create path of a tool (the video families name their resolution in the path). */
function createPaths(tool: ToolEntry): { path: string; pathParams: Record<string, string> }[] {
  let combos: Record<string, string>[] = [{}];
  for (const f of pathFields(tool))
    combos = combos.flatMap((c) => (f.kind === 'enum' ? f.options : []).map((o) => ({ ...c, [f.name]: o })));
  return combos.map((pathParams) => ({ path: resolvePaths(tool, DEFAULT_SLUGS, pathParams).create, pathParams }));
}

/** A schema's one integer branch (scale_factor is an integer or its string form). */
function numeric(s: JsonSchema): JsonSchema {
  const alt = (s.oneOf ?? s.anyOf) as JsonSchema[] | undefined;
  return alt?.find((b) => b.type === 'integer' || b.type === 'number') ?? s;
}
const words = (values: unknown) =>
  Array.isArray(values) ? values.filter((v) => typeof v === 'string' && /^[\w.:-]+$/.test(v)) : [];

/** Where the catalogue entry and the reference disagree, each naming the field. */
export function mismatches(tool: ToolEntry, op: Operation): string[] {
  const out: string[] = [];
  const schema = bodyObject(op);
  const props = (schema?.properties ?? {}) as Props;
  const required = (schema?.required ?? []) as string[];
  for (const f of bodyFields(tool)) {
    const p = props[f.name];
    if (!p) {
      out.push(`${f.name}: not a parameter of ${op.path}`);
      continue;
    }
    const n = numeric(p);
    const same = (what: string, mine: unknown, theirs: unknown) => {
      if (theirs !== undefined && mine !== theirs)
        out.push(`${f.name}: ${what} ${String(mine)} where the reference says ${String(theirs)}`);
    };
    if (f.kind === 'enum') {
      const theirs = words(p.enum);
      if (theirs.length && [...f.options].sort().join() !== [...theirs].sort().join())
        out.push(`${f.name}: options ${f.options.join(', ')} where the reference says ${theirs.join(', ')}`);
    }
    if (f.kind === 'int' || f.kind === 'number') {
      same('minimum', f.min, n.minimum);
      same('maximum', f.max, n.maximum);
    }
    if (f.kind === 'intChoice') {
      const allowed = (v: number) =>
        Array.isArray(n.enum)
          ? n.enum.includes(v)
          : (n.minimum === undefined || v >= (n.minimum as number)) &&
            (n.maximum === undefined || v <= (n.maximum as number));
      for (const v of f.options) if (!allowed(v)) out.push(`${f.name}: option ${v} is outside the reference's values`);
    }
    if (f.kind === 'text') {
      same('minLength', f.minLength, p.minLength);
      same('maxLength', f.maxLength, p.maxLength);
    }
    if (f.kind === 'mediaList') {
      same('min', f.min, p.minItems);
      same('max', f.max, p.maxItems);
    }
  }
  for (const r of required) {
    const f = tool.fields.find((x) => x.name === r);
    if (!f || (!f.required && defaultOf(f) === undefined && f.name !== tool.batchField))
      out.push(`${r}: required by the reference, but the app may leave it out`);
  }
  return out;
}

const SAMPLE_IMAGE = 'https://example.com/photo.png';
const SAMPLE_VIDEO = 'https://example.com/clip.mp4';
function sampleOf(f: Field): unknown {
  switch (f.kind) {
    case 'text':
      return 'a lighthouse at dusk, cinematic light';
    case 'media':
      // A field that takes no URL (the creative upscaler's base64 image) gets the inline stand-in.
      if (!f.encodings.includes('url')) return placeholderFor(f);
      return f.media === 'video' ? SAMPLE_VIDEO : SAMPLE_IMAGE;
    case 'mediaList':
      return Array.from({ length: f.min ?? 1 }, () => (f.media === 'image' ? SAMPLE_IMAGE : SAMPLE_VIDEO));
    case 'bool':
      return true;
    case 'url':
      return 'https://example.com/hook';
    case 'enum':
      return f.options[0];
    case 'intChoice':
      return f.options[0];
    case 'int':
    case 'number':
      return f.min ?? 1;
    case 'object':
      // Every property set, each to its own sample: the nested form's fullest object.
      return Object.fromEntries(f.fields.map((x) => [x.name, sampleOf(x)]));
    case 'shots':
      return [{ prompt: 'a pier at dawn', duration: 4 }];
    case 'styling':
      return {
        styles: [{ name: 'Watercolor', strength: 80 }],
        characters: [{ id: '6', strength: 100 }],
        colors: [{ color: '#3B5BDB', weight: 0.5 }],
      };
  }
}

/** The smallest request the app sends: its defaults, every required field, the batch input. */
function baseParams(tool: ToolEntry): Record<string, unknown> {
  const p: Record<string, unknown> = { ...defaultsOf(tool) };
  for (const f of tool.fields)
    if ((f.required || f.name === tool.batchField) && p[f.name] === undefined) p[f.name] = sampleOf(f);
  for (const r of tool.rules ?? [])
    if (r.kind === 'anyOf' && r.fields.every((x) => p[x] === undefined))
      p[r.fields[0]] = sampleOf(tool.fields.find((f) => f.name === r.fields[0])!);
  return p;
}

/** Variations of the base request: each bound, each enum value and choice, each optional field set. */
function variations(tool: ToolEntry): [string, Record<string, unknown>][] {
  const base = baseParams(tool);
  const out: [string, Record<string, unknown>][] = [['defaults', base]];
  for (const f of bodyFields(tool)) {
    const v = (label: string, value: unknown) => out.push([`${f.name}=${label}`, { ...base, [f.name]: value }]);
    if ((f.kind === 'int' || f.kind === 'number') && f.min !== undefined) v(String(f.min), f.min);
    if ((f.kind === 'int' || f.kind === 'number') && f.max !== undefined) v(String(f.max), f.max);
    if (f.kind === 'enum') for (const o of f.options) v(o, o);
    if (f.kind === 'intChoice') for (const o of f.options) v(String(o), o);
    if (f.kind === 'text' && f.maxLength !== undefined) v(`${f.maxLength} characters`, 'x'.repeat(f.maxLength));
    if (f.kind === 'mediaList')
      v(
        `${f.max} items`,
        Array.from({ length: f.max }, () => (f.media === 'image' ? SAMPLE_IMAGE : SAMPLE_VIDEO)),
      );
    if (base[f.name] === undefined) v('set', sampleOf(f));
  }
  return out;
}

/** A request the app would send: its own checks pass, then the body as it goes on the wire. */
function wire(tool: ToolEntry, params: Record<string, unknown>): Record<string, unknown> | null {
  // Keyframes and references exclude each other: a variation that sets both is not one the app sends.
  if (!validateRequest(tool, params).ok) return null;
  return bodyOf(tool, params);
}

describe("the app's catalogue conforms to the official reference", () => {
  it.each(TOOLS.map((t) => [t.id, t] as const))(
    '%s: its create paths exist and its fields agree on names, enums and bounds',
    (_id, tool) => {
      for (const { path } of createPaths(tool)) {
        const op = findOperation('POST', path);
        expect(op, `${tool.id}: POST ${path} is not in the reference`).toBeDefined();
        expect(mismatches(tool, op!), `${tool.id} against POST ${path}`).toEqual([]);
      }
    },
  );

  it.each(TOOLS.map((t) => [t.id, t] as const))(
    '%s: every request the app builds (defaults, bounds, enum values, optional fields) validates',
    (_id, tool) => {
      for (const { path, pathParams } of createPaths(tool)) {
        const op = findOperation('POST', path)!;
        let sent = 0;
        for (const [label, params] of variations(tool)) {
          const body = wire(tool, { ...params, ...pathParams });
          if (!body) continue;
          sent++;
          expect(requestProblems(op, body), `${tool.id} ${label} → POST ${path}`).toEqual([]);
        }
        expect(sent, `${tool.id}: the defaults are a request the app sends`).toBeGreaterThan(0);
      }
    },
  );

  it('every task create of the reference says what it generates, and each tool returns just that', () => {
    const creates = OPERATIONS.filter(
      (op) =>
        op.method === 'POST' && /^\/v1\/ai\/[^{]+$/.test(op.path) && !/^\/v1\/ai\/(uploads|loras)\//.test(op.path),
    );
    expect(creates.length).toBeGreaterThan(30);
    for (const op of creates) expect(RESULT_KINDS, `POST ${op.path}`).toContain(op.generates);
    for (const tool of TOOLS)
      for (const { path } of createPaths(tool))
        expect(findOperation('POST', path)?.generates, `${tool.id} → POST ${path}`).toBe(tool.result);
  });

  it('the list and by-id paths the app polls exist', () => {
    for (const tool of TOOLS) {
      const p = resolvePaths(
        tool,
        DEFAULT_SLUGS,
        Object.fromEntries(pathFields(tool).map((f) => [f.name, defaultOf(f)])),
      );
      const created = findOperation('POST', p.create)!;
      // A path-only family (documented create only) is polled where its create is.
      if (created.basis === 'official') {
        expect(findOperation('GET', p.list), `${tool.id}: GET ${p.list}`).toBeDefined();
        expect(
          findOperation('GET', p.byId('00000000-0000-4000-8000-000000000000')),
          `${tool.id}: GET ${p.list}/{task-id}`,
        ).toBeDefined();
      }
    }
  });

  it('catches a broken field: a renamed parameter, a changed bound, a missing enum value and a lost required field are each named', () => {
    const camera = TOOLS.find((t) => t.id === 'change-camera')!;
    const op = findOperation('POST', resolvePaths(camera, DEFAULT_SLUGS).create)!;
    const broken = (change: (f: Field) => Field | null): ToolEntry => ({
      ...camera,
      fields: camera.fields.map(change).filter((f): f is Field => f !== null),
    });
    expect(
      mismatches(
        broken((f) => (f.name === 'zoom' ? { ...f, name: 'zoom_level' } : f)),
        op,
      ),
    ).toEqual(['zoom_level: not a parameter of /v1/ai/image-change-camera']);
    expect(
      mismatches(
        broken((f) => (f.name === 'vertical_angle' && f.kind === 'int' ? { ...f, max: 80 } : f)),
        op,
      ),
    ).toEqual(['vertical_angle: maximum 80 where the reference says 90']);
    expect(
      mismatches(
        broken((f) => (f.name === 'output_format' && f.kind === 'enum' ? { ...f, options: ['png'] } : f)),
        op,
      ),
    ).toEqual(['output_format: options png where the reference says png, jpeg']);
    expect(
      mismatches({ ...broken((f) => (f.name === 'image' ? { ...f, required: false } : f)), batchField: undefined }, op),
    ).toEqual(['image: required by the reference, but the app may leave it out']);
    // A request with a value the reference refuses is named by the validation too.
    expect(requestProblems(op, { image: SAMPLE_IMAGE, zoom: 11 })).toEqual([
      { field: 'zoom', reason: 'must be at most 10' },
    ]);
    expect(requestProblems(op, { image: SAMPLE_IMAGE, zoom_level: 3 })).toEqual([
      { field: 'zoom_level', reason: 'is not a parameter of this endpoint' },
    ]);
  });

  it('says of each tool how it was verified, as the reference does', () => {
    for (const tool of TOOLS) {
      for (const { path } of createPaths(tool))
        expect(basisOf(tool), `${tool.id}: ${path}`).toBe(findOperation('POST', path)!.basis);
    }
  });

  it('names where each model path was read, and the official ones are in the official description', () => {
    for (const [key, { slug, basis }] of Object.entries(MODEL_SLUGS)) {
      const tools = TOOLS.filter((t) => t.create.includes(`{${key}}`));
      expect(tools.length, key).toBeGreaterThan(0);
      for (const t of tools) {
        for (const { path } of createPaths(t)) {
          const op = findOperation('POST', path);
          expect(op, `${key}=${slug}: ${path}`).toBeDefined();
          if (basis === 'official') expect(op!.basis, `${key}=${slug}`).toBe('official');
        }
      }
    }
  });
});

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(o(v).data) ? (o(v).data as unknown[]) : []);

/** Fields the app read otherwise than the answer gives them, each named (`members.0.email: read "" where …`). */
function misread(what: string, pairs: [string, unknown, unknown][]): string[] {
  return pairs
    .filter(([, read, given]) => given !== undefined && given !== null && String(read) !== String(given))
    .map(
      ([field, read, given]) =>
        `${what}.${field}: read ${JSON.stringify(read)} where the answer says ${JSON.stringify(given)}`,
    );
}

const responsesOf = (method: 'GET' | 'POST', path: string, status = '200'): [string, unknown][] => {
  const op = findOperation(method, path);
  expect(op, `${method} ${path} is in the reference`).toBeDefined();
  return answersOf((op!.responses?.[status] ?? {}) as Answer);
};

/** What the app reads of the team directory, against each answer's fields. */
export function directoryMisreads(
  members: unknown,
  keys: unknown,
  groups: unknown,
  projects: unknown,
  parse = parseDirectory,
): string[] {
  const dir = parse(members, keys, groups, projects);
  const out: string[] = [];
  list(members)
    .map(o)
    .forEach((m, i) => {
      out.push(
        ...misread(`members.${i}`, [
          ['email', dir.members[i]?.email, m.email],
          ['role', dir.members[i]?.role, m.role],
          ['status', dir.members[i]?.status, m.status],
        ]),
      );
      if (!dir.members[i]?.name) out.push(`members.${i}.name: read blank where the answer says ${String(m.email)}`);
      if (dir.members[i]?.id === 0) out.push(`members.${i}.id: read 0 where the answer gives none`);
    });
  list(keys)
    .map(o)
    .forEach((k, i) =>
      out.push(
        ...misread(`apiKeys.${i}`, [
          ['id', dir.apiKeys[i]?.id, k.api_key_id],
          ['name', dir.apiKeys[i]?.name, k.display_name],
          ['status', dir.apiKeys[i]?.status, k.status],
        ]),
      ),
    );
  list(groups)
    .map(o)
    .forEach((g, i) =>
      out.push(
        ...misread(`groups.${i}`, [
          ['id', dir.groups[i]?.id, g.group_id],
          ['name', dir.groups[i]?.name, g.name],
          ['memberCount', dir.groups[i]?.memberCount, g.member_count],
        ]),
      ),
    );
  list(projects)
    .map(o)
    .forEach((p, i) =>
      out.push(
        ...misread(`projects.${i}`, [
          ['reference', dir.projects[i]?.reference, p.project_reference],
          ['name', dir.projects[i]?.name, p.name],
        ]),
      ),
    );
  return out;
}

/** What the app reads of a page of recent creations, against the answer's items. */
export function creationMisreads(body: unknown, parse = creationOf): string[] {
  return list(body).flatMap((raw, i) => {
    const item = o(raw);
    const c = o(item.creation);
    const read = parse(raw);
    if (!read) return [`creations.${i}: not read at all`];
    return misread(`creations.${i}`, [
      ['id', read.creation.id, item.reference ?? item.id],
      ['name', read.creation.name, item.name],
      ['toolName', read.creation.toolName, item.tool_name],
      ['url', read.creation.url, c.url],
      [
        'type',
        read.creation.type,
        ['image', 'video', 'audio', 'text'].includes(String(c.family)) ? c.family : undefined,
      ],
      ['thumbnail', read.thumbUrl, o(item.thumbnail).url],
    ]);
  });
}

describe("the official answers read through the app's parsers", () => {
  const isTaskPath = (op: Operation) =>
    op.path.startsWith('/v1/ai/') && !/^\/v1\/ai\/(apps|flows|me|loras|uploads)(\/|$)/.test(op.path);

  it('task creates and by-ids read as task envelopes; lists as lists of them (every example and each schema)', () => {
    let read = 0;
    // The operations the manifest names; the rest (described.json) are read by the generated tools' test.
    const named = OPERATIONS.filter((op) => !RESTED.has(op));
    for (const op of named.filter((op) => isTaskPath(op) && !answersAtOnce(op))) {
      const single = op.method === 'POST' || op.path.endsWith('{task-id}');
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        for (const [label, body] of answersOf(r as Answer)) {
          const at = `${op.method} ${op.path} (${label})`;
          const items = single ? [body] : list(body).map((item) => ({ data: item }));
          if (!single) expect(Array.isArray(o(body).data), `${at}: data is a list`).toBe(true);
          for (const item of items) {
            let e;
            try {
              e = readEnvelope(item);
            } catch (err) {
              throw new Error(`${at}: ${(err as Error).message}`);
            }
            // A few schemas describe the task without its `data` wrapper (reimagine-flux).
            const task = o(o(item).data ?? item);
            expect(e.taskId, `${at}: task_id`).toBe(task.task_id);
            expect(e.status, `${at}: status`).toBe(String(task.status ?? task.task_status).toUpperCase());
            read++;
          }
        }
      }
    }
    expect(read).toBeGreaterThan(100);
  });

  it('the LoRA catalogue reads in both of its shapes: the declared array and the example object', () => {
    const op = findOperation('GET', '/v1/ai/loras')!;
    const example = op.responses!['200'].example as { data: { default: unknown[]; customs: unknown[] } };
    const asObject = loraGroups(example);
    expect(asObject.default.length + asObject.customs.length).toBeGreaterThan(0);
    const asArray = loraGroups({ data: [example.data] });
    expect(asArray).toEqual(asObject);
  });

  it.each(['apps', 'flows'])(
    'workflow %s: the list, a definition and a run read with their sqid, inputs and results',
    (word) => {
      const id = word === 'apps' ? '{app-id}' : '{flow-id}';
      for (const path of [`/v1/ai/${word}`, `/v1/ai/me/${word}`])
        for (const [label, body] of responsesOf('GET', path)) {
          const apps = parseAppList(body);
          expect(apps.length, `${path} (${label})`).toBeGreaterThan(0);
          expect(apps[0].id, `${path} (${label}): sqid`).toBe(o(list(body)[0]).sqid);
        }
      for (const [label, body] of responsesOf('GET', `/v1/ai/${word}/${id}`).filter(([l]) => l !== 'schema sample')) {
        const def = parseAppDefinition(body);
        expect(def.id, `${word} definition (${label}): sqid`).toBe(o(o(body).data).sqid);
        expect(def.inputs.length, `${word} definition (${label}): inputs`).toBeGreaterThan(0);
      }
      for (const [label, body] of responsesOf('POST', `/v1/ai/${word}/${id}/run`, '202'))
        expect(parseRun(body).runId, `${word} run (${label}): workflow_run_identifier`).toBe(
          o(body).workflow_run_identifier ?? o(o(body).data).run_id,
        );
      for (const [label, body] of responsesOf('GET', `/v1/ai/${word}/runs/{run-id}`))
        expect(parseRun(body).runId, `${word} run detail (${label}): run_id`).toBe(o(o(body).data).run_id);
    },
  );

  it('recent creations: each item read with its file URL, its kind and its thumbnail', () => {
    const answers = responsesOf('GET', '/v1/creations/recent');
    expect(answers.length).toBeGreaterThan(1);
    for (const [label, body] of answers) {
      expect(creationMisreads(body), label).toEqual([]);
      expect(creationOf(list(body)[0])!.creation.url, label).toMatch(/^https:/);
    }
  });

  it('team directory: members, API keys, groups and projects read field by field', () => {
    const paths = ['team-members', 'team-api-keys', 'team-groups', 'team-projects'].map((p) => `/v1/analytics/${p}`);
    const [members, keys, groups, projects] = paths.map((p) => responsesOf('GET', p));
    for (let i = 0; i < 2; i++) {
      const pick = (a: [string, unknown][]) => a[Math.min(i, a.length - 1)][1];
      expect(directoryMisreads(pick(members), pick(keys), pick(groups), pick(projects)), `answer ${i}`).toEqual([]);
    }
  });

  it('team credit usage: each day read with its tools, uses, credits and members', () => {
    for (const [label, body] of responsesOf('POST', '/v1/analytics/team-credit-usage')) {
      const points = parseUsage(body);
      const days = list(body).map(o);
      expect(points.length, label).toBe(days.length);
      days.forEach((day, i) => {
        const consumptions = (day.consumptions as Obj[]) ?? [];
        const credits = consumptions.reduce((a, c) => a + Number(c.user_credits ?? 0), 0);
        expect(points[i].credits, `${label}: day ${i} credits`).toBe(credits);
        for (const c of consumptions) expect(points[i].byTool, `${label}: tool`).toHaveProperty([String(c.tool)]);
        const emails = consumptions.flatMap((c) => ((c.user_usages as Obj[]) ?? []).map((u) => u.user_email));
        for (const e of emails)
          expect(
            Object.values(points[i].byUser).map((u) => u.email),
            `${label}: user_email`,
          ).toContain(e);
      });
    }
  });

  it('errors: every 4xx answer that names invalid parameters reads with their names and reasons', () => {
    let read = 0;
    for (const op of OPERATIONS)
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        if (!status.startsWith('4')) continue;
        const alt = (r as { problemJson?: Answer }).problemJson;
        for (const [label, body] of [...answersOf(r as Answer), ...(alt ? answersOf(alt) : [])]) {
          const given = (o(body).invalid_params ?? o(o(body).problem).invalid_params) as Obj[] | undefined;
          if (!Array.isArray(given)) continue;
          expect(toInvalidParams(body), `${op.method} ${op.path} ${status} (${label})`).toEqual(
            given.map((p) => ({ field: String(p.name ?? p.field), reason: String(p.reason) })),
          );
          read++;
        }
      }
    expect(read).toBeGreaterThan(10);
  });

  it('a misread field is named: creations read flat (no URL, no thumbnail), members with id 0 and no name', () => {
    const [, page] = responsesOf('GET', '/v1/creations/recent')[0];
    // As the app read them before: a top-level url and type, which the description's items do not have.
    const flat = (raw: unknown) => {
      const i = o(raw);
      const url = typeof i.url === 'string' ? i.url : null;
      const read = creationOf(raw)!;
      return { creation: { ...read.creation, url, type: url ? 'image' : 'text' }, thumbUrl: url };
    };
    expect(creationMisreads(page, flat).slice(0, 3)).toEqual([
      'creations.0.url: read null where the answer says "https://cdn.freepik.com/creations/8421.png"',
      'creations.0.type: read "text" where the answer says "image"',
      'creations.0.thumbnail: read null where the answer says "https://cdn.freepik.com/thumbnails/8421.jpg"',
    ]);
    const [, members] = responsesOf('GET', '/v1/analytics/team-members')[0];
    const byIdAndName: typeof parseDirectory = (...a) => {
      const d = parseDirectory(...a);
      return { ...d, members: d.members.map((m) => ({ ...m, id: 0, name: '' })) };
    };
    expect(directoryMisreads(members, {}, {}, {}, byIdAndName).slice(0, 2)).toEqual([
      'members.0.name: read blank where the answer says designer@company.com',
      'members.0.id: read 0 where the answer gives none',
    ]);
  });

  it('every operation names where it was read: official ones their description and date, the others their basis', () => {
    for (const f of REFERENCE_FILES) {
      for (const op of f.operations) {
        if (op.basis === 'official') {
          expect(op.source?.commit, `${op.method} ${op.path}`).toMatch(/^[0-9a-f]{40}$/);
          expect(op.source?.repo, `${op.method} ${op.path}`).toBeTruthy();
        } else expect(op.basisSource, `${op.method} ${op.path}`).toBeTruthy();
      }
    }
    const dated = OPERATIONS.filter((op) => op.source?.date);
    expect(dated.length).toBeGreaterThan(50);
  });
});
