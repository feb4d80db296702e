import { basename, join, resolve } from 'node:path';
import { moveSavedFile } from '../../../core/saved-files.ts';
import { oneLine, UsageError, type CliCommand, type CliContext } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions } from './team-common.ts';

const USAGE = [
  'mediadesk report-problem [--out DIR]',
  '  (a zip to attach to an issue: redacted logs, versions, settings, the last crash dump; never the key or',
  "   a file's content; written to the Exports folder, or to DIR. Nothing is sent anywhere)",
].join('\n');

async function reportProblem(ctx: CliContext): Promise<number> {
  const options = parseOptions(ctx.argv, ['--out'], []);
  if (options.positional.length) throw new UsageError(`report-problem takes no arguments (${USAGE})`);
  const out = options.one('--out');
  const s = await openCliServices(ctx);
  try {
    const r = await invoke(s.core, 'support.report', {});
    if (out) r.path = await moveSavedFile(r.path, join(resolve(out), basename(r.path)));
    ctx.stdout.write(
      `wrote ${oneLine(r.path)}: ${r.entries.length} files${r.crashDump ? ', the last crash dump among them' : ''}\n`,
    );
    ctx.stdout.write('Nothing was sent: look inside, then attach it to an issue if you want to.\n');
    return 0;
  } finally {
    await s.close();
  }
}

export const reportProblemCommand: CliCommand = { name: 'report-problem', usage: USAGE, run: reportProblem };
