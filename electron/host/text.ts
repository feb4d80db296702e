import { ignoredSettingText, type IgnoredSetting } from '../../shared/contract/foundation.ts';

const CONTROL = /[\u0000-\u001f\u007f]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text for one line of output: a file name may hold a newline or other control characters (legal
 * on macOS and Linux), which would split one `rejected PATH: reason` line in two for the script
 * reading it, or move the terminal's cursor. They are shown escaped, as `\n` or `\x1b`.
 */
export const oneLine = (s: string): string =>
  s.replace(CONTROL, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/**
 * JSON for a terminal: JSON.stringify escapes every control character but DEL, which is written
 * as `\u007f` here too, so the output is still valid JSON and holds none of what oneLine escapes.
 */
export const terminalJson = (v: unknown, indent?: number): string =>
  (JSON.stringify(v, null, indent) ?? String(v)).replace(/\u007f/g, '\\u007f');

/** A stored setting this build did not use, as `mediadesk settings get` and the web host say it on stderr. */
export const ignoredSettingNote = (i: IgnoredSetting): string => `note: ${oneLine(ignoredSettingText(i))}\n`;

/** Why the settings file could not be read (its JSON error may quote the file's own bytes), on one line. */
export const unreadableSettingsWarning = (unreadable: string, then: string): string => `warning: ${oneLine(unreadable)}; ${then}\n`;
