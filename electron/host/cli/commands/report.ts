import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { reportCsv } from '../../../core/queue/batch-report.ts';
import type { BatchReport } from '../../../../shared/contract/report.ts';
import {
  chargesSentence,
  serviceSentence,
  estimateSentence,
  reportSummary,
  teamSpendSentence,
} from '../../../../shared/contract/report.ts';
import { oneLine, terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { parseOptions, refusal } from './team-common.ts';

export const reportCommand: CliCommand = {
  name: 'report',
  usage: [
    'mediadesk report BATCH [--csv FILE] [--json]',
    '         (BATCH: its id or the start of it, as `mediadesk run` prints it; --csv writes one row per job to FILE;',
    "          the charges are read from the team's credit usage, cached, at most 100 requests a day)",
  ].join('\n'),
  async run(ctx) {
    const options = parseOptions(ctx.argv, ['--csv'], ['--json']);
    if (options.positional.length !== 1)
      throw new UsageError(options.positional.length ? 'report takes one batch id' : 'report needs a batch id');
    const csv = options.one('--csv');
    const s = await openCliServices(ctx);
    try {
      const id = options.positional[0];
      const reply = await s.core.dispatch('batches.report', { id });
      // A batch id not found is the user's typo, as in `jobs list --batch`.
      if (!reply.ok) throw refusal(reply.error, ['invalid', 'not_found']);
      const r = reply.result as BatchReport;
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else
        ctx.stdout.write(
          `${r.toolLabel}, batch ${r.batchId.slice(0, 8)}${r.finished ? '' : ' (not finished)'}\n` +
            `${reportSummary(r)}\n${estimateSentence(r)}\n${chargesSentence(r)}\n` +
            (serviceSentence(r) ? `${serviceSentence(r)}\n` : '') +
            (r.team ? `${teamSpendSentence(r.team)}\n` : ''),
        );
      if (csv !== undefined) {
        const target = resolve(csv);
        await writeFile(target, reportCsv(r), 'utf8');
        ctx.stderr.write(
          `wrote ${oneLine(target)}: ${r.jobs.length} row${r.jobs.length === 1 ? '' : 's'}, one per job\n`,
        );
      }
      return 0;
    } finally {
      await s.close();
    }
  },
};
