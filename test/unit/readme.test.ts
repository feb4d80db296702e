import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../electron/host/cli/commands/index.ts';

/** The README is for the people who use the app; everything else lives in docs/, linked from it. */
const ROOT = resolve(import.meta.dirname, '../..');
const README = join(ROOT, 'README.md');
const readme = readFileSync(README, 'utf8');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => join(ROOT, 'docs', f));

/** The text under a `## heading`, up to the next heading of that level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const anchorsIn = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => anchorOf(l.replace(/^#+ /, ''))),
  );

/** Every `[text](target)` and `![alt](target)` outside code blocks. */
function linksIn(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

describe('README', () => {
  it('is at most 120 lines', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(120);
  });

  it('speaks plainly: none of the words the issue found in it', () => {
    const jargon = [/\bcontract\b/i, /\bdispatcher\b/i, /\bbackends?\b/i, /\bkeyset\b/i, /\bFTS5\b/, /\bWAL\b/];
    const more = [/\bfingerprint\b/i, /Sandbox identity/i];
    expect([...jargon, ...more].flatMap((word) => readme.match(word) ?? [])).toEqual([]);
  });

  it('every relative link in README.md and docs/*.md names a file that exists, and a heading there', () => {
    const broken: string[] = [];
    for (const file of [README, ...DOCS]) {
      for (const link of linksIn(file)) {
        if (/^[a-z]+:/i.test(link)) continue;
        const [path, anchor] = link.split('#');
        const target = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
        const where = `${relative(ROOT, file)}: ${link}`;
        if (!existsSync(target)) broken.push(`${where} (no such file)`);
        else if (anchor && statSync(target).isFile() && target.endsWith('.md') && !anchorsIn(target).has(anchor))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('links every doc in docs/', () => {
    const linked = new Set(linksIn(README).map((l) => resolve(ROOT, l.split('#')[0])));
    expect(DOCS.filter((d) => !linked.has(d)).map((d) => relative(ROOT, d))).toEqual([]);
  });

  it('gives the two commands for a fresh machine, which are the scripts CI and a user run', () => {
    const block = /```sh\n([\s\S]*?)```/.exec(section(readme, 'Two commands for a fresh machine'))![1];
    const commands = block
      .trim()
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim());
    expect(commands).toEqual(['bash scripts/start.sh', 'bash scripts/test.sh']);
    for (const c of commands) expect(existsSync(join(ROOT, c.split(' ')[1]))).toBe(true);
    // CI runs exactly the README's test command.
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^exec bash scripts\/test\.sh$/m);
  });

  it('names every dependency and devDependency of package.json, with why', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    const why = section(readme, 'Dependencies and why');
    const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
    expect(names.filter((n) => !why.includes(`\`${n}\``))).toEqual([]);
  });
});

describe('docs/CLI.md', () => {
  it("names every command of `mediadesk --help` and every option of each command's --help", async () => {
    const cliDoc = readFileSync(join(ROOT, 'docs', 'CLI.md'), 'utf8');
    const missing: string[] = [];
    for (const ref of COMMANDS) {
      if (!cliDoc.includes(`\`${ref.name}\``)) missing.push(ref.name);
      // What `mediadesk <command> --help` prints.
      const { usage } = await ref.load();
      for (const o of new Set(usage.match(/--[a-z][a-z-]*/g)))
        if (!cliDoc.includes(o)) missing.push(`${ref.name} ${o}`);
    }
    expect(missing).toEqual([]);
  });
});
