import { once } from 'node:events';
import { DEMO_KEYS, startSandbox } from '../../../sandbox/index.ts';
import { webhookSecret } from '../../../sandbox/webhooks.ts';
import { oneLine, UsageError, type CliCommand } from '../command.ts';
import { interruptible } from '../interrupt.ts';
import { parseOptions } from './team-common.ts';

function intOption(raw: string | undefined, name: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new UsageError(`${name} expects an integer from ${min} to ${max}, got "${oneLine(raw)}"`);
  return Number(raw);
}

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  usage:
    'mediadesk sandbox [--port N] [--seed S] [--task-duration-ms MS] [--limits service|off] [--print-keys]   (runs until Ctrl-C, exit 130, or SIGTERM, exit 0)',
  async run(ctx) {
    // The other commands' parser: --name=value as well, and a repeated option is refused rather
    // than one of its values silently taken (`--seed 5 --seed 6` printed seed 5's secret).
    const options = parseOptions(ctx.argv, ['--port', '--seed', '--task-duration-ms', '--limits'], ['--print-keys']);
    if (options.positional.length)
      throw new UsageError(`unexpected argument "${oneLine(options.positional[0])}"; usage: ${this.usage}`);
    const seed = intOption(options.one('--seed'), '--seed', 0, 2 ** 32 - 1) ?? 1;
    // Checked with --print-keys too: a bad value is a mistake in the script whichever way it runs.
    const port = intOption(options.one('--port'), '--port', 0, 65535) ?? 0;
    const taskDurationMs = intOption(options.one('--task-duration-ms'), '--task-duration-ms', 0, 3_600_000);
    const limits = options.one('--limits') ?? 'off';
    if (limits !== 'service' && limits !== 'off')
      throw new UsageError(`--limits expects "service" or "off", got "${oneLine(limits)}"`);
    if (options.flags.has('--print-keys')) {
      for (const k of DEMO_KEYS)
        ctx.stdout.write(
          `${k.key.padEnd(18)} ${k.plan.padEnd(10)} ${k.role.padEnd(6)} audit logs ${k.auditLogs ? 'on ' : 'off'}  ${k.description}\n`,
        );
      ctx.stdout.write(`webhook signing secret (seed ${seed}): ${webhookSecret(seed)}\n`);
      return 0;
    }
    // Ends only by a signal: the server closes (its temporary files go), then Ctrl-C exits 130 and
    // SIGTERM 0, a server's clean stop. Caught before the listening line: a script's Ctrl-C on seeing
    // it killed the process before the handler was there, leaving the files behind.
    const stop = interruptible();
    try {
      const sandbox = await startSandbox({ port, seed, taskDurationMs, limits });
      // Scripts wait for this exact first line.
      ctx.stdout.write(`listening on ${sandbox.url}\n`);
      ctx.stdout.write(
        `demo keys: ${DEMO_KEYS.map((k) => k.key).join(', ')}; control API: ${sandbox.url}/__sandbox/\n`,
      );
      if (!stop.signal.aborted) await once(stop.signal, 'abort');
      await sandbox.close();
    } finally {
      stop.release();
    }
    return stop.by() === 'SIGTERM' ? 0 : 130;
  },
};
