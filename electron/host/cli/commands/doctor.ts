import { oneLine, terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions } from './team-common.ts';

/** Settings' "Test connection" from a terminal: the same checks, through the same command. */
export const doctorCommand: CliCommand = {
  name: 'doctor',
  usage: 'mediadesk doctor [--json]   (exit 0 when every check passes, 1 when one fails)',
  async run(ctx) {
    const options = parseOptions(ctx.argv, [], ['--json']);
    if (options.positional.length) throw new UsageError(`unexpected argument "${oneLine(options.positional[0])}"`);
    const s = await openCliServices(ctx);
    try {
      const r = await invoke(s.core, 'connection.test', {});
      const failed = r.checks.filter((c) => !c.ok).length;
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else {
        // One line a check, what to do next on the same line: a script greps it, a person reads on.
        for (const c of r.checks)
          ctx.stdout.write(
            `${c.ok ? 'ok  ' : 'FAIL'} ${oneLine(c.name)}: ${oneLine(c.detail)}${c.fix ? ` -> ${oneLine(c.fix)}` : ''}\n`,
          );
        ctx.stderr.write(
          failed
            ? `${failed} of ${r.checks.length} checks failed against ${r.backend}\n`
            : `all ${r.checks.length} checks passed against ${r.backend}\n`,
        );
      }
      return failed ? 1 : 0;
    } finally {
      await s.close();
    }
  },
};
