import {
  ALL_TOOLS,
  DEFAULT_SLUGS,
  defaultOf,
  findTool,
  resolvePaths,
  type Field,
  type ToolEntry,
} from '../../../../shared/catalogue/index.ts';
import { publishedPriceOf } from '../../../../shared/prices.ts';
import { creditFigure } from '../../../../shared/cost-words.ts';
import { oneLine, terminalJson, UsageError, type CliCommand } from '../command.ts';
import { parseOptions, table } from './team-common.ts';

/** The service path a tool creates with, at the shipped model slugs. */
const pathOf = (t: ToolEntry) => resolvePaths(t, DEFAULT_SLUGS).create;

/** What a tool takes from a dropped file, in words ("an image"), or null for prompt-only tools. */
function takes(t: ToolEntry): string | null {
  const f = t.fields.find((x) => x.name === t.batchField);
  return f && 'media' in f ? f.media : null;
}

function summaryOf(t: ToolEntry) {
  return {
    id: t.id,
    name: t.title,
    kind: t.result,
    path: pathOf(t),
    takes: takes(t),
    generated: t.generated === true,
    sync: t.sync === true,
    ...(t.unusable ? { unusable: t.unusable } : {}),
  };
}

/** A field's type in words: its kind, its medium and how a file travels, its options. */
function typeOf(f: Field): string {
  switch (f.kind) {
    case 'enum':
      return `one of ${f.options.join(', ')}`;
    case 'intChoice':
      return `one of ${f.options.join(', ')}`;
    case 'media':
      return `${f.media} (a file: ${f.encodings.includes('base64') || f.encodings.includes('dataUri') ? 'sent inline' : 'uploaded'}; or a URL)`;
    case 'mediaList':
      return `list of ${f.media}s (comma-separated files or URLs)`;
    case 'object':
      return `JSON object of ${f.fields.map((x) => `${x.name}${x.required ? '' : '?'}: ${typeOf(x)}`).join(', ')}`;
    case 'json':
      return f.why ? `JSON (${f.why})` : 'JSON';
    default:
      return f.kind;
  }
}

function boundsOf(f: Field): string {
  const parts: string[] = [];
  if ('min' in f && f.min !== undefined) parts.push(`>= ${f.min}`);
  if ('max' in f && f.max !== undefined) parts.push(`<= ${f.max}`);
  if ('minLength' in f && f.minLength !== undefined) parts.push(`>= ${f.minLength} chars`);
  if ('maxLength' in f && f.maxLength !== undefined) parts.push(`<= ${f.maxLength} chars`);
  return parts.join(', ');
}

function fieldRow(f: Field) {
  const d = defaultOf(f);
  return {
    name: f.name,
    type: typeOf(f),
    bounds: boundsOf(f),
    default: d === undefined ? null : d,
    required: f.required === true,
    help: f.help ?? null,
  };
}

function show(t: ToolEntry): string {
  const price = publishedPriceOf(t.id);
  const lines = [
    `${t.title} (${t.id})${t.generated ? ', generated from the service description' : ''}`,
    t.summary,
    `makes: ${t.result}; creates with POST ${pathOf(t)}${t.sync ? ' (answers at once)' : ''}`,
    t.batchField ? `a folder batch fills: ${t.batchField}` : 'takes no input files: give its parameters only',
    `price: ${price.credits === null ? 'no published price (mediadesk prices set to give your own)' : `${creditFigure(price.credits)} credits for ${price.unit}`}`,
    ...(t.unusable ? [`cannot be run from MediaDesk: ${t.unusable}`] : []),
    '',
  ];
  const rows = t.fields.map(fieldRow);
  const fields = table(
    ['FIELD', 'TYPE', 'BOUNDS', 'DEFAULT', 'REQUIRED', 'HELP'],
    rows.map((r) => [
      r.name,
      r.type,
      r.bounds,
      r.default === null ? '' : JSON.stringify(r.default),
      r.required ? 'yes' : '',
      r.help ?? '',
    ]),
  );
  return `${lines.map(oneLine).join('\n')}${fields}`;
}

export const toolsCommand: CliCommand = {
  name: 'tools',
  usage: [
    'mediadesk tools [--search WORDS] [--json]  (every tool: curated and generated from the service description;',
    '                                           --search keeps those whose id, name, kind, path or input hold every word)',
    '       mediadesk tools show ID [--json]  (its fields: type, bounds, default, required, help)',
  ].join('\n'),
  async run(ctx) {
    const options = parseOptions(ctx.argv, ['--search'], ['--json']);
    const json = options.flags.has('--json');
    const [sub, id, extra] = options.positional;
    if (sub === 'show') {
      if (!id) throw new UsageError('tools show needs a tool id (mediadesk tools lists them)');
      if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
      const t = findTool(id);
      if (!t) throw new UsageError(`unknown tool "${id}" (mediadesk tools lists them)`);
      ctx.stdout.write(
        json
          ? `${terminalJson({ ...summaryOf(t), summary: t.summary, fields: t.fields.map(fieldRow) }, 2)}\n`
          : show(t),
      );
      return 0;
    }
    if (sub !== undefined) throw new UsageError(`unknown tools command "${sub}"`);
    const words = (options.one('--search') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const all = ALL_TOOLS.map(summaryOf).filter((t) => {
      const text = [t.id, t.name, t.kind, t.path, t.takes ?? ''].join(' ').toLowerCase();
      return words.every((w) => text.includes(w));
    });
    if (json) {
      ctx.stdout.write(`${terminalJson(all, 2)}\n`);
      return 0;
    }
    ctx.stdout.write(
      table(
        ['ID', 'NAME', 'KIND', 'PATH'],
        all.map((t) => [t.id, t.unusable ? `${t.name} (cannot run: see tools show)` : t.name, t.kind, t.path]),
      ),
    );
    ctx.stdout.write(`${all.length} tools; mediadesk tools show ID for one's fields\n`);
    return all.length ? 0 : 1;
  },
};
