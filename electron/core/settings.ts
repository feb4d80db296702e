import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import Conf from 'conf';
import {
  DEFAULT_SETTINGS,
  settingsPatchSchema,
  settingsSchema,
  type Settings,
  type SettingsPatch,
} from '../../shared/settings.ts';
import { DeskError } from '../../shared/contract/define.ts';
import type { IgnoredSetting } from '../../shared/contract/foundation.ts';
import { outputFolderProblem } from './output-folder.ts';

/** What conf is: a JSON file with a whole-object getter and setter. */
export interface JsonFileStore {
  store: Record<string, unknown>;
  readonly path: string;
  /** Why the file could not be read at the last read (defaults are in use meanwhile); null when it could. */
  readonly unreadable?: string | null;
  /** Where the first save after an unreadable read put the file it replaced. */
  readonly keptAs?: string | null;
}

export const SETTINGS_FILE = 'settings';

/** Why a settings file could not be read, in words: `path is not valid JSON (…)`, `… cannot be read: permission denied`. */
function unreadableReason(path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const message = err instanceof Error ? err.message.replace(/\s+/g, ' ') : String(err);
  if (err instanceof SyntaxError) return `${path} is not valid JSON (${message})`;
  if (code === 'EACCES' || code === 'EPERM') return `${path} cannot be read: permission denied`;
  if (code === 'EISDIR') return `${path} cannot be read: it is a folder`;
  return `${path} cannot be read: ${message}`;
}

/**
 * A settings file that may be unreadable: a failed read runs every host on the defaults and says
 * why, leaving the file as it is; the first save moves it aside (`settings.json.bad-<time>`).
 */
export class GuardedStore implements JsonFileStore {
  readonly path: string;
  unreadable: string | null = null;
  keptAs: string | null = null;
  private readonly open: () => JsonFileStore;
  private inner: JsonFileStore | null = null;

  constructor(path: string, open: () => JsonFileStore) {
    this.path = path;
    this.open = open;
  }

  get store(): Record<string, unknown> {
    try {
      // conf reads the file in its constructor too, so opening is a read.
      this.inner ??= this.open();
      const stored = this.inner.store;
      this.unreadable = null;
      return stored;
    } catch (err) {
      // No file at all is no damage to keep: that error (a folder that cannot be created) is the caller's.
      if (!existsSync(this.path)) throw err;
      this.unreadable = unreadableReason(this.path, err);
      return {};
    }
  }

  set store(value: Record<string, unknown>) {
    if (this.unreadable !== null && existsSync(this.path)) {
      const aside = `${this.path}.bad-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      renameSync(this.path, aside);
      this.keptAs = aside;
      this.unreadable = null;
      this.inner = null;
    }
    this.inner ??= this.open();
    this.inner.store = value;
  }
}

/**
 * The settings file of every host (desktop app, web host, CLI), through conf alone: one file, same
 * name, same folder, same format as the electron-store (over conf) the app once used.
 */
export function openConfStore(home: string): GuardedStore {
  return new GuardedStore(
    join(home, `${SETTINGS_FILE}.json`),
    () => new Conf<Record<string, unknown>>({ cwd: home, configName: SETTINGS_FILE, clearInvalidConfig: false }),
  );
}

/** A stored value as the user would find it in the file: JSON, on one line, cut short. */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * The settings in the file, each checked alone: one bad value (edited by hand, or from a newer
 * build) must not reset every other setting. What was not used is listed, read by read, so a value
 * mended in the file stops being mentioned.
 */
function readSettings(raw: Record<string, unknown>): { settings: Settings; ignored: IgnoredSetting[] } {
  const good: Record<string, unknown> = {};
  const ignored: IgnoredSetting[] = [];
  for (const [name, v] of Object.entries(raw)) {
    const single = settingsPatchSchema.safeParse({ [name]: v });
    if (single.success) {
      good[name] = v;
      continue;
    }
    const known = Object.hasOwn(settingsSchema.shape, name);
    const issue = single.error.issues[0];
    // perToolConcurrency.image, not just the setting: which entry of it is wrong.
    const inner = issue.path.slice(1).join('.');
    const reason = known
      ? `${inner ? `${inner} ` : ''}${issue.message}`
      : 'not a setting of this version of MediaDesk, perhaps of a newer one';
    ignored.push({ name, stored: shown(v), reason, known });
  }
  return { settings: settingsSchema.parse(good), ignored };
}

export class SettingsService extends EventEmitter<{ changed: [Settings] }> {
  private readonly file: JsonFileStore;

  constructor(file: JsonFileStore) {
    super();
    this.file = file;
  }

  get(): Settings {
    // Read on every request and engine tick: the per-key pass runs only when the whole file fails.
    const raw = this.file.store;
    const whole = settingsSchema.safeParse(raw);
    return whole.success ? whole.data : readSettings(raw).settings;
  }

  set(patch: SettingsPatch): Settings {
    const parsed = settingsPatchSchema.safeParse(patch);
    if (!parsed.success) {
      throw new DeskError(
        'invalid',
        'settings not saved',
        parsed.error.issues.map((i) => ({
          field: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(', ') : ''),
          reason: i.code === 'unrecognized_keys' ? 'is not a setting' : i.message,
        })),
      );
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

  /** The file, why it could not be read, which of its values were not used (read now), and where a save kept an unreadable one. */
  fileState(): { path: string; unreadable: string | null; keptAs: string | null; ignored: IgnoredSetting[] } {
    const { ignored } = readSettings(this.file.store);
    return {
      path: this.file.path,
      unreadable: this.file.unreadable ?? null,
      keptAs: this.file.keptAs ?? null,
      ignored,
    };
  }
}

export { DEFAULT_SETTINGS };
