/**
 * The README's tool table and docs/TOOLS.md, made from the catalogue (curated tools and those
 * generated from the reference). Run after `npm run reference:update`; test/unit/tools-table.test.ts
 * holds both files to what this makes.
 *
 *   npm run tools:table
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ALL_TOOLS, DEFAULT_SLUGS, RESULT_KINDS, resolvePaths, type ToolEntry } from '../shared/catalogue/index.ts';

const ROOT = resolve(import.meta.dirname, '..');
export const README = join(ROOT, 'README.md');
export const TOOLS_DOC = join(ROOT, 'docs', 'TOOLS.md');
const HEAD = "| [Tools](docs/TOOLS.md): curated + from the service's description |";

/** The README's table: how many tools make each kind of result, curated and generated. */
export function readmeTable(): string {
  const count = (kind: string, generated: boolean) =>
    ALL_TOOLS.filter((t) => t.result === kind && (t.generated === true) === generated).length;
  return [
    `${HEAD} ${RESULT_KINDS.join(' | ')} |`,
    `|---|${RESULT_KINDS.map(() => '---').join('|')}|`,
    `| \`mediadesk tools\` lists each | ${RESULT_KINDS.map((k) => `${count(k, false)} + ${count(k, true)}`).join(' | ')} |`,
  ].join('\n');
}

/** The README with its table replaced by `table` (the table's three lines, found by its first cell). */
export function withTable(readme: string, table: string): string {
  const lines = readme.split('\n');
  const at = lines.findIndex((l) => l.startsWith(HEAD));
  if (at < 0) throw new Error(`README.md has no tool table (a line starting "${HEAD}")`);
  lines.splice(at, 3, ...table.split('\n'));
  return lines.join('\n');
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

function takes(t: ToolEntry): string {
  const f = t.fields.find((x) => x.name === t.batchField);
  return f && 'media' in f ? `${f.media} (\`${f.name}\`)` : 'parameters only';
}

function notes(t: ToolEntry): string {
  if (t.unusable) return `cannot run: ${t.unusable}`;
  return [t.generated ? 'generated' : 'curated', t.sync ? 'answers at once' : ''].filter(Boolean).join(', ');
}

/** docs/TOOLS.md: every tool by what it makes, with its id, name, path, what a folder batch fills. */
export function toolsDoc(): string {
  const out = [
    '# Tools',
    '',
    'Every tool MediaDesk offers, by what it makes. Curated tools have labels, presets and screens of their own; the',
    "others are made from the service's own description by `npm run reference:update` (no code per tool), each with",
    "a form of its fields. `mediadesk tools show ID` prints a tool's fields; `mediadesk run ID` runs it. This file is",
    'made by `npm run tools:table`.',
  ];
  for (const kind of RESULT_KINDS) {
    const tools = ALL_TOOLS.filter((t) => t.result === kind);
    out.push('', `## ${kind[0].toUpperCase()}${kind.slice(1)} (${tools.length})`, '');
    out.push('| id | name | creates with | a folder batch fills | notes |', '|---|---|---|---|---|');
    for (const t of tools)
      out.push(
        `| \`${t.id}\` | ${cell(t.title)} | \`${resolvePaths(t, DEFAULT_SLUGS).create}\` | ${takes(t)} | ${cell(notes(t))} |`,
      );
  }
  return `${out.join('\n')}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(README, withTable(readFileSync(README, 'utf8'), readmeTable()));
  writeFileSync(TOOLS_DOC, toolsDoc());
  console.log(`README.md's tool table and docs/TOOLS.md written (${ALL_TOOLS.length} tools)`);
}
