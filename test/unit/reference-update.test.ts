import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  toolOfGenerated,
  validateRequest,
  withDefaults,
  type GeneratedCatalogue,
} from '../../shared/catalogue/index.ts';
import { requestProblems, type ReferenceFile } from '../../shared/official/index.ts';
import { bodyOf } from '../../electron/core/api/tools.ts';

/** `npm run reference:update` as a maintainer runs it, on a small description and its next version. */
const fixtures = join(import.meta.dirname, 'fixtures', 'reference-update');
const BEFORE = 'a'.repeat(40);
const AFTER = 'b'.repeat(40);

function update(dir: string, file: string, commit: string, date: string): string[] {
  const r = spawnSync(
    process.execPath,
    [
      'scripts/reference-update.ts',
      join(fixtures, file),
      '--repo',
      'vendor/api',
      '--path',
      'api.yaml',
      '--commit',
      commit,
      '--date',
      date,
      '--out',
      dir,
    ],
    { encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim().split('\n');
}
const read = (dir: string, name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
const op = (file: { operations: { method: string; path: string }[] }, key: string) =>
  file.operations.find((o) => `${o.method} ${o.path}` === key) as Record<string, any> | undefined;

describe('reference:update', () => {
  const dir = mkdtempSync(join(tmpdir(), 'md-refupd-'));
  for (const f of ['manifest.json', 'docs-and-spec.json']) copyFileSync(join(fixtures, f), join(dir, f));

  it('generates the operations the manifest lists from a YAML description, each with its source and date, facts only', () => {
    const report = update(dir, 'before.yaml', BEFORE, '2026-01-01');
    expect(report[0]).toBe('Reference from vendor/api/api.yaml@aaaaaaa (2026-01-01): 4 operations described.');
    expect(report).toContain('POST /v1/ai/widget: added');
    const widget = op(read(dir, 'tools.json'), 'POST /v1/ai/widget')!;
    expect(widget).toMatchObject({
      operationId: 'create_widget',
      basis: 'official',
      source: { repo: 'vendor/api', path: 'api.yaml', commit: BEFORE, date: '2026-01-01' },
      generates: 'image',
    });
    expect(widget.body.properties.prompt).toEqual({ type: 'string', maxLength: 1000 });
    expect(widget.body.properties.seed).toEqual({ type: ['integer', 'null'] });
    expect(widget.body).not.toHaveProperty('anyOf');
    expect(widget.responses['200'].example).toEqual({
      data: { task_id: '046b6c7f-0b8a-43b9-b35d-6489e6daee91', status: 'CREATED' },
    });
  });

  it('reports what the next description changed, moves what it now covers out of the hand-kept file, keeps what it lost', () => {
    const report = update(dir, 'after.json', AFTER, '2026-02-01');
    expect(report).toEqual(
      expect.arrayContaining([
        'POST /v1/ai/sprocket: now described; moved from docs-and-spec.json (was docs) into media-tools.json',
        'POST /v1/ai/widget: body field added: shade',
        'POST /v1/ai/widget: style: enum adds matte',
        'POST /v1/ai/widget: style: enum drops glossy',
        'POST /v1/ai/widget: size: maximum 4 -> 8',
        'POST /v1/ai/widget: body now requires size',
        'POST /v1/ai/widget-old: not in this description; kept from vendor/api@aaaaaaa',
        'POST /v1/ai/text-to-image/brand-new-model: new in the description, not used by the app (a model the app has never seen)',
        'POST /v1/ai/gadget: gone from the description',
      ]),
    );
    // The hand-kept file keeps what the description does not cover (the uploads entry), and no more.
    expect(read(dir, 'docs-and-spec.json').operations.map((o: { path: string }) => o.path)).toEqual([
      '/v1/ai/uploads/request-url',
    ]);
    const sprocket = op(read(dir, 'media-tools.json'), 'POST /v1/ai/sprocket')!;
    expect(sprocket).toMatchObject({ basis: 'official', generates: 'audio', source: { commit: AFTER } });
    expect(sprocket.rules).toEqual([
      { kind: 'requires', field: 'loud', needs: 'prompt', reason: 'loud requires prompt' },
    ]);
    expect(op(read(dir, 'tools.json'), 'POST /v1/ai/widget-old')!.source.commit).toBe(BEFORE);
    expect(read(dir, 'manifest.json').files['media-tools']).toEqual([
      { method: 'POST', path: '/v1/ai/sprocket', generates: 'audio', rules: sprocket.rules },
    ]);
  });

  it('run again on the same description, reproduces the same files and reports no change', () => {
    const files = ['tools.json', 'media-tools.json', 'docs-and-spec.json', 'manifest.json'];
    const before = files.map((f) => readFileSync(join(dir, f), 'utf8'));
    const report = update(dir, 'after.json', AFTER, '2026-02-01');
    expect(files.map((f) => readFileSync(join(dir, f), 'utf8'))).toEqual(before);
    expect(report).toEqual([
      'Reference from vendor/api/api.yaml@bbbbbbb (2026-02-01): 4 operations described.',
      'POST /v1/ai/widget-old: not in this description; kept from vendor/api@aaaaaaa',
    ]);
  });
});

describe('reference:update with a rest file', () => {
  it('puts every other described operation into it, a new model with what it makes read from its path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-refrest-'));
    copyFileSync(join(fixtures, 'docs-and-spec.json'), join(dir, 'docs-and-spec.json'));
    const manifest = JSON.parse(readFileSync(join(fixtures, 'manifest.json'), 'utf8'));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, rest: 'described' }));
    update(dir, 'before.yaml', BEFORE, '2026-01-01');
    const report = update(dir, 'after.json', AFTER, '2026-02-01');
    expect(report).toContain(
      'POST /v1/ai/text-to-image/brand-new-model: new in the description, in described.json (a model the app has never seen)',
    );
    const model = op(read(dir, 'described.json'), 'POST /v1/ai/text-to-image/brand-new-model')!;
    expect(model).toMatchObject({ basis: 'official', generates: 'image', source: { commit: AFTER } });
    // What the manifest names stays in its own file, never twice.
    expect(op(read(dir, 'described.json'), 'POST /v1/ai/widget')).toBeUndefined();
    expect(read(dir, 'manifest.json').rest).toBe('described');
  });

  it('gives a rest operation the rules its description words only in prose, and refuses rules for one it lacks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-refrules-'));
    copyFileSync(join(fixtures, 'docs-and-spec.json'), join(dir, 'docs-and-spec.json'));
    const manifest = JSON.parse(readFileSync(join(fixtures, 'manifest.json'), 'utf8'));
    const rule = { kind: 'anyOf', fields: ['prompt'], reason: 'is required (the description says so in words)' };
    const write = (restRules: Record<string, unknown[]>) =>
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, rest: 'described', restRules }));
    write({ 'POST /v1/ai/gadget': [rule] });
    update(dir, 'before.yaml', BEFORE, '2026-01-01');
    expect(op(read(dir, 'described.json'), 'POST /v1/ai/gadget')!.rules).toEqual([rule]);
    write({ 'POST /v1/ai/no-such-model': [rule] });
    const args = ['--repo', 'v/a', '--path', 'a.yaml', '--commit', BEFORE, '--date', '2026-01-01', '--out', dir];
    const r = spawnSync(process.execPath, ['scripts/reference-update.ts', join(fixtures, 'before.yaml'), ...args], {
      encoding: 'utf8',
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('restRules: not operations of the rest file: POST /v1/ai/no-such-model');
  });
});

describe('reference:update and a model the app has never seen', () => {
  it('makes it a working tool with no code: fields from its schema, a body its own schema accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-newmodel-'));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ files: {}, rest: 'described' }));
    const report = update(dir, 'new-model.yaml', AFTER, '2026-03-01');
    expect(report).toContain('1 creates written as tools to ' + join(dir, 'generated-tools.json'));
    const cat = read(dir, 'generated-tools.json') as GeneratedCatalogue;
    const tool = toolOfGenerated(cat.tools[0]);
    expect(tool).toMatchObject({
      id: 'image-to-video-aurora-9',
      title: 'Aurora 9 · image to video',
      summary: 'Aurora 9 - Animate a still image',
      group: 'video',
      result: 'video',
      create: '/v1/ai/image-to-video/aurora-9',
      list: '/v1/ai/image-to-video/aurora-9',
      listShown: true,
      batchField: 'image',
      generated: true,
    });
    expect(tool.fields).toEqual([
      {
        name: 'image',
        label: 'Image',
        kind: 'media',
        media: 'image',
        required: true,
        encodings: ['url', 'base64'],
        help: 'Base64 or URL of the image to animate.',
      },
      {
        name: 'prompt',
        label: 'Prompt',
        kind: 'text',
        maxLength: 500,
        multiline: true,
        help: 'What should move, and how.',
      },
      {
        name: 'duration',
        label: 'Duration',
        kind: 'enum',
        options: ['5', '10'],
        default: '5',
        help: 'Length of the video in seconds.',
      },
      { name: 'motion', label: 'Motion', kind: 'int', min: 0, max: 10, default: 4 },
      { name: 'loop', label: 'Loop', kind: 'bool', default: false },
      { name: 'webhook_url', label: 'Webhook url', kind: 'url', advanced: true },
    ]);
    // The request a form or `--param`s make of it, as the engine sends it, passes the model's own
    // schema as the Sandbox judges it; a value out of its bounds is refused before anything is paid.
    const params = withDefaults(tool, { image: 'https://example.com/still.png', prompt: 'leaves drift' });
    expect(validateRequest(tool, params).invalid).toEqual([]);
    const op = (read(dir, 'described.json') as ReferenceFile).operations.find(
      (o) => o.method === 'POST' && o.path === tool.create,
    )!;
    expect(requestProblems(op, bodyOf(tool, params))).toEqual([]);
    expect(validateRequest(tool, { ...params, motion: 11 }).invalid).toEqual([
      { field: 'motion', reason: 'must be at most 10' },
    ]);
  });
});
