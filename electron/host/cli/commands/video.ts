/**
 * `mediadesk video check [--family F] [--prompt TEXT] [--body JSON|@file] [SOURCE...]`: probes local
 * files, HTTPS URLs and the body's frames, and prints checkReferences' JSON report. Exit 0 when every
 * rule passes, 1 when not, 2 on bad usage.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { FAMILIES, isFamily } from '../../../../shared/catalogue/families.ts';
import { terminalJson, UsageError, type CliCommand, type CliContext } from '../command.ts';

const USAGE = `mediadesk video check [--family ${FAMILIES.join('|')}] [--prompt TEXT] [--body JSON|@file.json] [SOURCE...]`;

async function parseBody(raw: string | undefined): Promise<Record<string, unknown>> {
  if (raw === undefined) return {};
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = await readFile(raw.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(`--body ${raw}: cannot read (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new UsageError('--body must be a JSON object (or @file.json)');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new UsageError('--body must be a JSON object (or @file.json)');
  return v as Record<string, unknown>;
}

async function check(ctx: CliContext, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        // The video upscaler's is the one family that takes a video file now (2.x takes frames only).
        family: { type: 'string', short: 'f', default: 'upscaler' },
        prompt: { type: 'string' },
        body: { type: 'string' },
      },
      tokens: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; usage: ${USAGE}`);
  }
  // parseArgs keeps the last of a repeated option: `--family 2x --family upscaler` in a script
  // built from two sources would check against one family while the user meant the other.
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue;
    if (seen.has(t.name)) throw new UsageError(`--${t.name} is given more than once`);
    seen.add(t.name);
  }
  const { family, prompt, body: rawBody } = parsed.values;
  if (!isFamily(family)) throw new UsageError(`--family must be one of ${FAMILIES.join(', ')}, got "${family}"`);
  const body = await parseBody(rawBody);
  if (prompt !== undefined) body.prompt = prompt;
  // Loaded on use: sharp and mp4box need not slow down every other command's start.
  const { checkReferences, framesOf } = await import('../../../core/media/check.ts');
  // A start or end frame in the body is something to check on its own.
  if (parsed.positionals.length === 0 && framesOf(family, body).length === 0)
    throw new UsageError(`no SOURCE (or frame in --body) given; usage: ${USAGE}`);
  const report = await checkReferences({ family, sources: parsed.positionals, body });
  ctx.stdout.write(terminalJson(report, 2) + '\n');
  return report.ok ? 0 : 1;
}

export const video: CliCommand = {
  name: 'video',
  usage: USAGE,
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    if (sub === 'check') return check(ctx, rest);
    throw new UsageError(sub ? `unknown subcommand "${sub}"; usage: ${USAGE}` : `missing subcommand; usage: ${USAGE}`);
  },
};
