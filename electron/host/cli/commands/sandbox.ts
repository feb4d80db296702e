import { DEMO_KEYS, startSandbox } from '../../../sandbox/index.ts';
import { webhookSecret } from '../../../sandbox/webhooks.ts';
import { UsageError, type CliCommand } from '../command.ts';

function intFlag(argv: string[], name: string, min: number, max: number): number | undefined {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const raw = argv[i + 1];
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`${name} expects an integer from ${min} to ${max}, got "${raw ?? ''}"`);
  return Number(raw);
}

const KNOWN = new Set(['--port', '--seed', '--task-duration-ms', '--print-keys']);

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  summary: 'Run the built-in Sandbox API on 127.0.0.1 (demo keys: --print-keys)',
  usage: 'mediadesk sandbox [--port N] [--seed S] [--task-duration-ms MS] [--print-keys]',
  async run(ctx) {
    const { argv } = ctx;
    for (let i = 0; i < argv.length; i++) {
      if (!KNOWN.has(argv[i])) throw new UsageError(`unknown option "${argv[i]}"; usage: ${this.usage}`);
      if (argv[i] !== '--print-keys') i++;
    }
    const seed = intFlag(argv, '--seed', 0, 2 ** 32 - 1) ?? 1;
    if (argv.includes('--print-keys')) {
      for (const k of DEMO_KEYS) ctx.stdout.write(`${k.key.padEnd(18)} ${k.plan.padEnd(10)} ${k.role.padEnd(6)} audit logs ${k.auditLogs ? 'on ' : 'off'}  ${k.description}\n`);
      ctx.stdout.write(`webhook signing secret (seed ${seed}): ${webhookSecret(seed)}\n`);
      return 0;
    }
    const sandbox = await startSandbox({ port: intFlag(argv, '--port', 0, 65535) ?? 0, seed, taskDurationMs: intFlag(argv, '--task-duration-ms', 0, 3_600_000) });
    // Scripts wait for this exact first line.
    ctx.stdout.write(`listening on ${sandbox.url}\n`);
    ctx.stdout.write(`demo keys: ${DEMO_KEYS.map((k) => k.key).join(', ')}; control API: ${sandbox.url}/__sandbox/\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await sandbox.close();
    return 0;
  },
};
