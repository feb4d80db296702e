import { applyIntegrationPlan, integrationPlace } from '../../../core/os-integration-apply.ts';
import { integrationPlan } from '../../../core/os-integration.ts';
import { openSettingsFile, SettingsService } from '../../../core/settings.ts';
import { UsageError, type CliCommand } from '../command.ts';
import { parseOptions } from '../parse-options.ts';
import { appExecutable } from './open.ts';

const USAGE = [
  'mediadesk integrate [--remove]',
  '  Adds "Process with MediaDesk" to the file manager (Nautilus, Dolphin, Nemo; Finder\'s Quick Action on',
  '  macOS; Explorer and Send To on Windows) and mediadesk:// links, as the switches in Settings > System say:',
  '  each one off is removed. --remove takes them all away. The desktop app must be installed (MEDIADESK_APP,',
  '  else where its installer puts it): each integration hands the files to it.',
].join('\n');

export const integrateCommand: CliCommand = {
  name: 'integrate',
  usage: USAGE,
  async run(ctx) {
    const o = parseOptions(ctx.argv, [], ['--remove']);
    if (o.positional.length) throw new UsageError(`integrate takes no arguments (${USAGE})`);
    const remove = o.flags.has('--remove');
    // Removing needs no app: it takes away what an earlier integrate wrote.
    const exe = appExecutable(ctx.env) ?? (remove ? 'mediadesk' : null);
    if (!exe) {
      ctx.stderr.write(
        'mediadesk integrate: the desktop app is not installed where expected: set MEDIADESK_APP to its executable (an AppImage: its path)\n',
      );
      return 1;
    }
    const settings = new SettingsService(openSettingsFile(ctx.home)).get();
    const done = await applyIntegrationPlan(integrationPlan(integrationPlace(exe, ctx.env), settings, remove));
    for (const d of done) (d.ok ? ctx.stdout : ctx.stderr).write(`${d.ok ? '' : 'mediadesk integrate: '}${d.said}\n`);
    return done.every((d) => d.ok) ? 0 : 1;
  },
};
