import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import Conf from 'conf';
import { DEFAULT_SETTINGS, settingsPatchSchema, settingsSchema, type Settings, type SettingsPatch } from '../../shared/settings.ts';
import { DeskError } from '../../shared/contract/define.ts';
import { outputFolderProblem } from './output-folder.ts';

/** What electron-store and conf both are: a JSON file with a whole-object getter and setter. */
export interface JsonFileStore {
  store: Record<string, unknown>;
  readonly path: string;
}

export const SETTINGS_FILE = 'settings';

/**
 * The settings file is shared by the desktop app (electron-store) and the web host and CLI (conf,
 * electron-store's underlying store): one file, same name, same folder.
 */
export function openConfStore(home: string): JsonFileStore {
  const open = () => new Conf<Record<string, unknown>>({ cwd: home, configName: SETTINGS_FILE, clearInvalidConfig: false });
  try {
    return open();
  } catch (err) {
    // A hand-edited file that is not JSON is kept aside, never silently overwritten.
    const file = join(home, `${SETTINGS_FILE}.json`);
    if (!existsSync(file)) throw err;
    const aside = `${file}.unreadable-${Date.now()}`;
    renameSync(file, aside);
    process.emitWarning(`settings.json was not valid JSON; kept it as ${aside} and started from defaults`);
    return open();
  }
}

export class SettingsService extends EventEmitter<{ changed: [Settings] }> {
  private readonly file: JsonFileStore;
  /** Keys whose stored value was invalid and fell back to its default, for the UI to mention. */
  readonly ignored: string[] = [];

  constructor(file: JsonFileStore) {
    super();
    this.file = file;
  }

  get(): Settings {
    const raw = this.file.store;
    const parsed = settingsSchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    // One bad value (edited by hand, or from a newer build) must not reset every other setting.
    const good: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(raw)) {
      const single = settingsPatchSchema.safeParse({ [k]: v });
      if (single.success) good[k] = v;
      else if (!this.ignored.includes(k)) this.ignored.push(k);
    }
    return settingsSchema.parse(good);
  }

  set(patch: SettingsPatch): Settings {
    const parsed = settingsPatchSchema.safeParse(patch);
    if (!parsed.success) {
      throw new DeskError('invalid', 'settings not saved', parsed.error.issues.map((i) => ({ field: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(', ') : ''), reason: i.code === 'unrecognized_keys' ? 'is not a setting' : i.message })));
    }
    // A folder that is in fact a file, or cannot be written, is named now rather than when a paid task's download fails.
    const folder = parsed.data.outputDir ? outputFolderProblem(parsed.data.outputDir) : null;
    if (folder) throw new DeskError('invalid', 'settings not saved', [{ field: 'outputDir', reason: folder }]);
    // Only the patched keys change in the file: a setting of a newer build (unknown here) or a
    // hand-edited value this build cannot use stays as it was, for that build or for the user to
    // correct, rather than being dropped or reset by an unrelated change.
    this.file.store = { ...this.file.store, ...parsed.data };
    const next = this.get();
    this.emit('changed', next);
    return next;
  }

  get path(): string {
    return this.file.path;
  }
}

export { DEFAULT_SETTINGS };
