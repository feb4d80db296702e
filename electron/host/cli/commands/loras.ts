import { resolve } from 'node:path';
import { LORA_KINDS, type LoraKind, type LoraTraining } from '../../../../shared/contract/loras.ts';
import { oneLine, terminalJson, UsageError, type CliCommand, type CliContext } from '../command.ts';
import { timeLimitOf, type TimeLimit } from '../duration.ts';
import { interruptible, TIMED_OUT } from '../interrupt.ts';
import { openCliServices, type CliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const USAGE = [
  'mediadesk loras list [--json]   (the LoRA catalogue: the defaults and your own)',
  '       mediadesk loras train --kind style|character --name NAME [--quality Q] [--gender G] [--description TEXT]',
  '         [--check] [--no-wait | --timeout DURATION] [--json] FOLDER|FILE...',
  '         (the images of the folders and files given, uploaded and sent once; --quality high unless given;',
  '          a character needs --gender; --check checks it and says its price, nothing is sent;',
  '          followed until the new LoRA is trained unless --no-wait; --timeout 10m stops following, exit 124)',
  '       mediadesk loras trainings [--json]   (earlier trainings, newest first)',
].join('\n');

const OPTIONS: Record<string, { valued: string[]; flags: string[] }> = {
  list: { valued: [], flags: ['--json'] },
  train: {
    valued: ['--kind', '--name', '--quality', '--gender', '--description', '--timeout'],
    flags: ['--check', '--no-wait', '--json'],
  },
  trainings: { valued: [], flags: ['--json'] },
};

const SETTLED: readonly LoraTraining['state'][] = ['done', 'failed', 'needs_attention'];
const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const short = (t: LoraTraining) => t.id.slice(0, 8);

/** Follows a training until it settles: 0 with its new LoRA, 1 when it failed or needs the user, 124/130 when stopped. */
async function follow(ctx: CliContext, s: CliServices, start: LoraTraining, timeout?: TimeLimit): Promise<number> {
  const stop = interruptible({ timeoutMs: timeout?.ms });
  try {
    // This process takes the queue (unless the desktop app holds it and trains for us).
    s.core.engine.start();
    let last = '';
    while (!stop.signal.aborted) {
      const t = (await invoke(s.core, 'loras.trainings', {})).trainings.find((x) => x.id === start.id)!;
      const line = oneLine(`${t.state}${t.trainingStatus ? ` (${t.trainingStatus})` : ''}`);
      if (line !== last) ctx.stderr.write(`${line}\n`);
      last = line;
      if (SETTLED.includes(t.state)) {
        if (t.state === 'done') ctx.stdout.write(`${oneLine(`${t.kind} LoRA ${t.name} trained: id ${t.loraId}`)}\n`);
        if (t.error) ctx.stderr.write(`${oneLine(t.error)}\n`);
        return t.state === 'done' ? 0 : 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await s.core.trainer.stop();
    ctx.stderr.write(
      `stopped following training ${short(start)}: it goes on; \`mediadesk loras trainings\` shows it, any MediaDesk on this data folder follows it\n`,
    );
    return stop.timedOut() ? TIMED_OUT : 130;
  } finally {
    stop.release();
  }
}

async function train(ctx: CliContext, s: CliServices, o: ReturnType<typeof parseOptions>): Promise<number> {
  const kind = o.one('--kind');
  if (!kind || !(LORA_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind must be ${LORA_KINDS.join(' or ')}${kind ? `, got "${kind}"` : ''}`);
  const name = o.one('--name');
  if (!name) throw new UsageError('--name is required: the name the new LoRA is known by');
  if (!o.positional.length) throw new UsageError('give the folder or the image files to train on');
  const timeout = timeLimitOf(o.one('--timeout'), o.flags.has('--no-wait'));
  const req = {
    kind: kind as LoraKind,
    name,
    quality: o.one('--quality') ?? 'high',
    ...(o.one('--gender') !== undefined ? { gender: o.one('--gender') } : {}),
    ...(o.one('--description') !== undefined ? { description: o.one('--description') } : {}),
    inputs: o.positional.map((p) => resolve(p)),
  };
  const check = await invoke(s.core, 'loras.trainCheck', req);
  for (const k of check.skipped) ctx.stderr.write(`${oneLine(`skipped ${k.path}: ${k.reason}`)}\n`);
  if (o.flags.has('--check')) {
    if (o.flags.has('--json')) ctx.stdout.write(`${terminalJson(check, 2)}\n`);
    else {
      ctx.stdout.write(`${check.images.length} images ready (${check.limits.min} to ${check.limits.max} taken)\n`);
      for (const p of check.problems) ctx.stdout.write(`${oneLine(`${p.field} ${p.reason}`)}\n`);
      ctx.stdout.write(`${oneLine(check.price.note)}\n`);
    }
    return check.ok ? 0 : 2;
  }
  ctx.stderr.write(`${oneLine(`${check.images.length} images; ${check.price.note}`)}\n`);
  const { training } = await invoke(s.core, 'loras.train', req);
  ctx.stderr.write(`training ${short(training)} queued\n`);
  if (o.flags.has('--json')) ctx.stdout.write(`${terminalJson(training, 2)}\n`);
  return o.flags.has('--no-wait') ? 0 : follow(ctx, s, training, timeout);
}

export const lorasCommand: CliCommand = {
  name: 'loras',
  usage: USAGE,
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !Object.hasOwn(OPTIONS, sub))
      throw new UsageError(
        sub ? `unknown loras command "${sub}" (list, train, trainings)` : 'say list, train or trainings',
      );
    const o = parseOptions(rest, OPTIONS[sub].valued, OPTIONS[sub].flags);
    if (sub !== 'train' && o.positional.length) throw new UsageError(`loras ${sub} takes no arguments`);
    const s = await openCliServices(ctx);
    try {
      if (sub === 'train') return await train(ctx, s, o);
      const json = o.flags.has('--json');
      if (sub === 'list') {
        const { loras } = await invoke(s.core, 'loras.list', {});
        if (json) ctx.stdout.write(`${terminalJson(loras, 2)}\n`);
        else
          ctx.stdout.write(
            table(
              ['ID', 'TYPE', 'MINE', 'STATUS', 'NAME'],
              loras.map((l) => [l.id, l.type, l.custom ? 'yes' : '', String(l.training?.status ?? ''), l.name]),
            ),
          );
        return 0;
      }
      const { trainings } = await invoke(s.core, 'loras.trainings', {});
      if (json) ctx.stdout.write(`${terminalJson(trainings, 2)}\n`);
      else if (!trainings.length) ctx.stderr.write('no LoRA trainings yet\n');
      else
        ctx.stdout.write(
          table(
            ['TRAINING', 'STATE', 'CREATED (UTC)', 'KIND', 'NAME', 'IMAGES', 'LORA', 'NOTE'],
            trainings.map((t) => [
              short(t),
              t.state,
              when(t.createdAt),
              t.kind,
              t.name,
              t.images,
              t.loraId ?? '',
              t.error ?? '',
            ]),
          ),
        );
      return 0;
    } finally {
      await s.close();
    }
  },
};
