import { z } from 'zod';
import { SINK_KINDS, type SinkConfig } from '../../../../shared/audit-sinks.ts';
import { auditForwardCommands, type ForwardStatus } from '../../../../shared/contract/audit-forward.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { forwardHandlers } from '../../../core/audit/forward/handlers.ts';
import { batchEventsFromEnv } from '../../../core/audit/forward/forwarder.ts';
import { AuditForwarder } from '../../../core/audit/forward/service.ts';
import type { AuditService } from '../../../core/audit/service.ts';
import { SinkSecrets } from '../../../core/secrets.ts';
import type { SettingsService } from '../../../core/settings.ts';
import { oneLine, terminalJson, UsageError, write, type CliContext } from '../command.ts';
import { interruptible } from '../interrupt.ts';
import { parseOptions } from './team-common.ts';

export const FORWARD_USAGE = [
  '       mediadesk audit forward [--sink ID] [--status] [--json]',
  `       mediadesk audit sinks add ID --kind ${SINK_KINDS.join('|')} (--url URL | --folder DIR) [--index I]`,
  '             [--username U] [--host H] [--source S] [--sourcetype T] [--disabled] [--secret-stdin]',
  '       mediadesk audit sinks remove ID | mediadesk audit sinks list [--json]',
  '   --secret-stdin: the HEC token, API key or password, read from standard input, stored in the keychain',
].join('\n');

/**
 * The settings file, loaded by the commands that forward alone: `audit query` and `export` need
 * neither it nor the settings' schema.
 */
async function settingsOf(ctx: CliContext): Promise<SettingsService> {
  const { openSettingsFile, SettingsService } = await import('../../../core/settings.ts');
  return new SettingsService(openSettingsFile(ctx.home));
}

/** The forwarder over the CLI's audit cache, the settings file and the keychain, as the app builds it. */
export async function openForwarder(
  ctx: CliContext,
  service: AuditService,
  opened?: SettingsService,
): Promise<AuditForwarder> {
  const settings = opened ?? (await settingsOf(ctx));
  return new AuditForwarder({
    db: service.store.db,
    settings: () => settings.get(),
    saveSinks: (auditSinks) => settings.set({ auditSinks }),
    secrets: new SinkSecrets(ctx.env),
    onBatch: (r) =>
      ctx.stderr.write(`sink ${r.sinkId}: ${r.delivered} delivered, ${r.refused} refused, ${r.requests} request(s)\n`),
    onRetry: (id, error, ms) =>
      ctx.stderr.write(`sink ${id}: ${oneLine(error)}; trying again in ${(ms / 1000).toFixed(1)} s\n`),
    maxBatchEvents: batchEventsFromEnv(ctx.env),
  });
}

/** After `audit sync` or `audit import`, when the setting forwardAfterAuditSync asks: each sink's outcome on stderr. */
export async function forwardAfter(ctx: CliContext, service: AuditService): Promise<void> {
  const settings = await settingsOf(ctx);
  if (!settings.get().forwardAfterAuditSync) return;
  const stop = interruptible();
  try {
    for (const r of await (await openForwarder(ctx, service, settings)).forward({ signal: stop.signal }))
      ctx.stderr.write(
        `forwarded to ${r.sinkId}: ${r.outcome}, ${r.delivered} delivered, ${r.refused} refused${r.error ? `; ${oneLine(r.error)}` : ''}\n`,
      );
  } finally {
    stop.release();
  }
}

/** The request as the contract checks it, a mistake named like any usage error. */
function checked<K extends keyof typeof auditForwardCommands>(name: K, req: unknown) {
  const r = auditForwardCommands[name].request.safeParse(req);
  if (r.success) return r.data as z.output<(typeof auditForwardCommands)[K]['request']>;
  throw new UsageError(r.error.issues.map((i) => `${i.path.join('.') || 'sink'} ${i.message}`).join('; '));
}

function printStatus(ctx: CliContext, s: ForwardStatus): void {
  if (!s.sinks.length) ctx.stdout.write('no audit sinks (mediadesk audit sinks add)\n');
  for (const x of s.sinks) {
    const state = {
      'up-to-date': 'up to date',
      behind: `behind by ${x.behind} event(s)`,
      failing: `failing since ${x.failingSince}, behind by ${x.behind}`,
      disabled: 'disabled',
    }[x.state];
    ctx.stdout.write(
      `${x.id.padEnd(16)} ${x.kind.padEnd(13)} ${state}; ${x.delivered} delivered, ${x.refused} refused  ${oneLine(x.target)}\n`,
    );
    if (x.lastError && x.state === 'failing') ctx.stdout.write(`  last error: ${oneLine(x.lastError)}\n`);
    if (x.heldBy)
      ctx.stdout.write(`  another process (pid ${x.heldBy.pid} on ${x.heldBy.host}) is forwarding it now\n`);
    if (!x.secretSet) ctx.stdout.write('  no secret stored: mediadesk audit sinks add … --secret-stdin\n');
  }
  ctx.stdout.write(`forward after each audit sync or import: ${s.forwardAfterSync ? 'on' : 'off'}\n`);
}

async function readStdin(ctx: CliContext): Promise<string> {
  let text = '';
  for await (const chunk of ctx.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, '');
}

/** `audit forward` and `audit sinks …`: the contract's forwarding commands, served here as in the app. */
export async function runForward(ctx: CliContext, service: AuditService, sub: string, args: string[]): Promise<number> {
  const forwarder = await openForwarder(ctx, service);
  const h = forwardHandlers(forwarder);
  try {
    if (sub === 'forward') {
      const p = parseOptions(args, ['--sink'], ['--status', '--json']);
      if (p.positional.length) throw new UsageError(`unexpected argument "${oneLine(p.positional[0])}"`);
      if (p.flags.has('--status')) {
        const s = await h['audit.forwardStatus']({});
        if (p.flags.has('--json')) await write(ctx.stdout, terminalJson(s) + '\n');
        else printStatus(ctx, s);
        return 0;
      }
      const { sinkId } = checked('audit.forward', { sinkId: p.one('--sink') });
      const stop = interruptible();
      try {
        const reports = await forwarder.forward({ sinkId, signal: stop.signal });
        if (p.flags.has('--json')) await write(ctx.stdout, terminalJson({ reports }) + '\n');
        for (const r of reports)
          if (!p.flags.has('--json'))
            ctx.stdout.write(
              `${r.sinkId}: ${r.outcome}, ${r.delivered} delivered, ${r.refused} refused, ${r.requests} request(s), ${r.retries} retried${r.error ? `; ${oneLine(r.error)}` : ''}\n`,
            );
        if (stop.signal.aborted) {
          ctx.stderr.write(
            'interrupted: what each sink acknowledged is kept; run the same command again to continue\n',
          );
          return 130;
        }
        const busy = reports.filter((r) => r.outcome === 'busy');
        for (const r of busy) ctx.stderr.write(`${r.error}: run the same command again once it ends\n`);
        if (reports.every((r) => r.outcome === 'complete')) return 0;
        // EX_TEMPFAIL: only sinks another process is forwarding now were left; a scheduler tries again later.
        return reports.every((r) => r.outcome === 'complete' || r.outcome === 'busy') ? 75 : 1;
      } finally {
        stop.release();
      }
    }
    const [action, ...rest] = args;
    if (action === 'list') {
      const p = parseOptions(rest, [], ['--json']);
      const s = await h['audit.forwardStatus']({});
      if (p.flags.has('--json')) await write(ctx.stdout, terminalJson(s) + '\n');
      else printStatus(ctx, s);
      return 0;
    }
    if (action === 'remove') {
      const p = parseOptions(rest, [], []);
      if (p.positional.length !== 1) throw new UsageError('audit sinks remove takes one sink ID');
      await h['audit.sinkRemove'](checked('audit.sinkRemove', { id: p.positional[0] }));
      ctx.stdout.write(`sink ${p.positional[0]} removed, with its watermark and stored secret\n`);
      return 0;
    }
    if (action === 'add') {
      const valued = ['--kind', '--url', '--folder', '--index', '--username', '--host', '--source', '--sourcetype'];
      const p = parseOptions(rest, valued, ['--disabled', '--secret-stdin']);
      if (p.positional.length !== 1) throw new UsageError('audit sinks add takes one sink ID');
      const sink: Record<string, unknown> = { id: p.positional[0], kind: p.one('--kind') };
      for (const o of valued.slice(1)) if (p.one(o) !== undefined) sink[o.slice(2)] = p.one(o);
      if (p.flags.has('--disabled')) sink.enabled = false;
      const secret = p.flags.has('--secret-stdin') ? await readStdin(ctx) : undefined;
      const req = checked('audit.sinkSave', { sink, secret });
      await h['audit.sinkSave'](req);
      ctx.stdout.write(`sink ${(req.sink as SinkConfig).id} saved${secret ? ', its secret in the keychain' : ''}\n`);
      return 0;
    }
    throw new UsageError('say audit sinks add, remove or list');
  } catch (err) {
    if (err instanceof DeskError) throw new UsageError(err.message);
    throw err;
  }
}
