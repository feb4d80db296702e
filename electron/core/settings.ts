import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EventEmitter } from 'node:events';
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
import { writeWhole } from './write-whole.ts';

/** A JSON file with a whole-object getter and setter. */
export interface JsonFileStore {
  store: Record<string, unknown>;
  readonly path: string;
  /** Why the file could not be read at the last read (defaults are in use meanwhile); null when it could. */
  readonly unreadable?: string | null;
  /** Where the first save after an unreadable read put the file it replaced. */
  readonly keptAs?: string | null;
}

export const SETTINGS_FILE = 'settings';

/** A settings file whose JSON is not an object: a list, a string, a number or null. */
class NotAnObject extends Error {}

/** Why a settings file could not be read, in words: `path is not valid JSON (…)`, `… cannot be read: permission denied`. */
function unreadableReason(path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const message = err instanceof Error ? err.message.replace(/\s+/g, ' ') : String(err);
  if (err instanceof NotAnObject) return `${path} does not hold a JSON object (${message})`;
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
 * settings.json in the format electron-store and conf wrote it for the desktop app (tab-indented, no
 * final newline): read at each access, as another host may have changed it; replaced whole.
 */
class SettingsFile implements JsonFileStore {
  readonly path: string;
  /** The data folder was made by a read: every request and engine tick reads, so once is enough. */
  private folderMade = false;

  constructor(path: string) {
    this.path = path;
  }

  get store(): Record<string, unknown> {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // No file yet: the data folder is made now, so a folder that cannot be is said at the first read.
      if (!this.folderMade) mkdirSync(dirname(this.path), { recursive: true });
      this.folderMade = true;
      return {};
    }
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    if (Array.isArray(value)) throw new NotAnObject('it holds a list');
    if (value === null || typeof value !== 'object') throw new NotAnObject(`it holds ${JSON.stringify(value)}`);
    return value as Record<string, unknown>;
  }

  set store(value: Record<string, unknown>) {
    mkdirSync(dirname(this.path), { recursive: true });
    writeWhole(this.path, JSON.stringify(value, undefined, '\t'));
  }
}

/**
 * The settings file of every host (desktop app, web host, CLI), where the app always kept it. Not conf
 * itself: its schema validator and migrations, which settings do not use, were ~0.15 CPU-s of every
 * command's start.
 */
export function openSettingsFile(home: string): GuardedStore {
  const path = join(home, `${SETTINGS_FILE}.json`);
  return new GuardedStore(path, () => new SettingsFile(path));
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
