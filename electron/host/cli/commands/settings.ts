import { oneLine, UsageError, type CliCommand } from '../command.ts';
import { openSettingsFile, SettingsService } from '../../../core/settings.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { settingsSchema } from '../../../../shared/settings.ts';
import { ignoredSettingNote, terminalJson, unreadableSettingsWarning } from '../../text.ts';

/** Shell strings to typed values: numbers, booleans and JSON objects as such, the rest as text. */
function parseValue(raw: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (raw.startsWith('{') || raw.startsWith('[')) {
    try {
      return JSON.parse(raw);
    } catch {
      throw new UsageError(`"${oneLine(raw)}" looks like JSON but does not parse`);
    }
  }
  return raw;
}

export const settingsCommand: CliCommand = {
  name: 'settings',
  usage: 'mediadesk settings get [NAME]\n       mediadesk settings set NAME=VALUE [NAME=VALUE ...]',
  async run(ctx) {
    const [sub, ...args] = ctx.argv;
    const settings = new SettingsService(openSettingsFile(ctx.home));
    const names = Object.keys(settingsSchema.shape);
    if (sub === 'get') {
      const all = settings.get() as Record<string, unknown>;
      if (args.length > 1) throw new UsageError('settings get takes at most one name');
      if (args[0] !== undefined && !names.includes(args[0]))
        throw new UsageError(`unknown setting "${oneLine(args[0])}" (known: ${names.join(', ')})`);
      const { unreadable, ignored } = settings.fileState();
      if (unreadable)
        ctx.stderr.write(unreadableSettingsWarning(unreadable, 'these are the defaults (the file is left as it is)'));
      // The value shown is not the one in the file: said on stderr, so stdout stays the value for scripts.
      for (const i of ignored) if (args[0] === undefined || i.name === args[0]) ctx.stderr.write(ignoredSettingNote(i));
      // A value edited into the file by hand (a folder name with a newline or an escape sequence)
      // is shown escaped: raw, it would move the terminal's cursor or split a script's one line.
      if (args[0] !== undefined) {
        const v = all[args[0]];
        ctx.stdout.write(`${typeof v === 'string' ? oneLine(v) : terminalJson(v)}\n`);
      } else {
        ctx.stdout.write(`${terminalJson(all, 2)}\n`);
      }
      return 0;
    }
    if (sub === 'set') {
      if (!args.length) throw new UsageError('settings set needs NAME=VALUE');
      const patch: Record<string, unknown> = {};
      for (const a of args) {
        const eq = a.indexOf('=');
        if (eq <= 0) throw new UsageError(`expected NAME=VALUE, got "${oneLine(a)}"`);
        const name = a.slice(0, eq);
        if (!names.includes(name))
          throw new UsageError(`unknown setting "${oneLine(name)}" (known: ${names.join(', ')})`);
        // The last one won: `theme=dark theme=light` saved light and said "saved theme", hiding the slip.
        if (Object.hasOwn(patch, name)) throw new UsageError(`${name} is given more than once`);
        patch[name] =
          name === 'baseUrl' || name === 'outputDir' || name === 'namingTemplate'
            ? a.slice(eq + 1)
            : parseValue(a.slice(eq + 1));
      }
      try {
        settings.set(patch);
      } catch (err) {
        if (err instanceof DeskError) throw new UsageError(err.describe());
        throw err;
      }
      ctx.stdout.write(`saved ${Object.keys(patch).join(', ')}\n`);
      const { keptAs } = settings.fileState();
      if (keptAs) ctx.stderr.write(`the settings file could not be read; it is kept as ${keptAs}\n`);
      return 0;
    }
    throw new UsageError(sub ? `unknown settings command "${sub}" (get, set)` : 'say get or set');
  },
};
