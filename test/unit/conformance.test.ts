import { describe, expect, it } from 'vitest';
import {
  basisOf,
  bodyFields,
  defaultOf,
  defaultsOf,
  DEFAULT_SLUGS,
  pathFields,
  resolvePaths,
  RESULT_KINDS,
  TOOLS,
  validateRequest,
  type Field,
  type ToolEntry,
} from '../../shared/catalogue/index.ts';
import {
  bodyObject,
  findOperation,
  OPERATIONS,
  REFERENCE_FILES,
  requestProblems,
  type JsonSchema,
  type Operation,
} from '../../shared/official/index.ts';
import { MODEL_SLUGS } from '../../shared/service-profile.ts';
import { bodyOf, readEnvelope } from '../../electron/core/api/tools.ts';
import { loraGroups } from '../../electron/core/loras.ts';
import { parseAppDefinition, parseAppList, parseRun } from '../../electron/core/apps/wire.ts';
import { parseDirectory, parseUsage } from '../../electron/core/analytics/wire.ts';

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
      (op) => op.method === 'POST' && /^\/v1\/ai\/[^{]+$/.test(op.path) && !op.path.startsWith('/v1/ai/uploads/'),
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

describe("the official example responses parse through the app's parsers", () => {
  const examples = (pred: (op: Operation) => boolean) =>
    OPERATIONS.filter(pred).flatMap((op) =>
      Object.entries(op.responses ?? {})
        .filter(([status, r]) => status.startsWith('2') && r.example !== undefined)
        .map(([, r]) => [op, r.example] as const),
    );

  it('task creates and by-ids read as task envelopes; lists as lists of them', () => {
    const tasks = (op: Operation) =>
      op.path.startsWith('/v1/ai/') &&
      !op.path.startsWith('/v1/ai/apps') &&
      !op.path.startsWith('/v1/ai/flows') &&
      !op.path.startsWith('/v1/ai/me') &&
      op.path !== '/v1/ai/loras';
    const single = examples((op) => tasks(op) && (op.method === 'POST' || op.path.endsWith('{task-id}')));
    const lists = examples((op) => tasks(op) && op.method === 'GET' && !op.path.includes('{'));
    expect(single.length).toBeGreaterThan(20);
    for (const [op, ex] of single) {
      const e = readEnvelope(ex);
      expect(e.taskId, `${op.method} ${op.path}`).toBeTruthy();
    }
    for (const [op, ex] of lists) {
      const items = (ex as { data: unknown[] }).data;
      expect(Array.isArray(items), op.path).toBe(true);
      for (const item of items) expect(readEnvelope(item).taskId).toBeTruthy();
    }
  });

  it('the LoRA catalogue reads in both of its shapes: the declared array and the example object', () => {
    const op = findOperation('GET', '/v1/ai/loras')!;
    const example = op.responses!['200'].example as { data: { default: unknown[]; customs: unknown[] } };
    const asObject = loraGroups(example);
    expect(asObject.default.length + asObject.customs.length).toBeGreaterThan(0);
    const asArray = loraGroups({ data: [example.data] });
    expect(asArray).toEqual(asObject);
  });

  it.each(['flows', 'apps'])(
    'workflow apps (%s): the list, a definition and a run read with their sqid, inputs and results',
    (family) => {
      const base = `/v1/ai/${family}`;
      const list = parseAppList(findOperation('GET', base)!.responses!['200'].example);
      expect(list.length).toBeGreaterThan(0);
      expect(list[0].id).toBeTruthy();
      const def = parseAppDefinition(findOperation('GET', `${base}/x`)!.responses!['200'].example);
      expect(def.id).toBeTruthy();
      expect(def.inputs.length).toBeGreaterThan(0);
      const ack = parseRun(findOperation('POST', `${base}/x/run`)!.responses!['202'].example);
      expect(ack.runId).toBeTruthy();
      const run = parseRun(findOperation('GET', `${base}/runs/x`)!.responses!['200'].example);
      expect(run.runId).toBeTruthy();
    },
  );

  it('team analytics: members, keys, groups, projects and credit usage', () => {
    const ex = (path: string, method: 'GET' | 'POST' = 'GET') =>
      findOperation(method, path)?.responses?.['200']?.example;
    const dir = parseDirectory(
      ex('/v1/analytics/team-members'),
      ex('/v1/analytics/team-api-keys'),
      ex('/v1/analytics/team-groups'),
      ex('/v1/analytics/team-projects'),
    );
    expect(dir.members[0].email).toMatch(/@/);
    expect(dir.apiKeys[0].name).toBeTruthy();
    expect(dir.groups[0]).toMatchObject({ id: 10, name: 'Design Team', memberCount: 5 });
    expect(dir.projects[0]).toMatchObject({
      reference: 'a1b2c3d4-1111-4000-8000-000000000001',
      name: 'Marketing Campaign Q4',
    });
    const usage = parseUsage(ex('/v1/analytics/team-credit-usage', 'POST'));
    expect(usage.length).toBeGreaterThan(0);
  });

  it('every reference file names where it was read', () => {
    for (const f of REFERENCE_FILES) {
      for (const op of f.operations) {
        if (op.basis === 'official') expect(f.source.commit, op.path).toMatch(/^[0-9a-f]{40}$/);
        else expect(op.basisSource, `${op.method} ${op.path}`).toBeTruthy();
      }
    }
  });
});
