import { ignoredSettingText, type IgnoredSetting } from '../../shared/contract/foundation.ts';

/**
 * C0, DEL and C1: the C1 ones (U+0080..U+009F) too, since some terminals take U+009B as CSI, the
 * start of an escape sequence, and some tools U+0085 (NEL) as a line break.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** What JSON.stringify leaves as it is of those. */
const JSON_UNESCAPED = /[\u007f-\u009f]/g;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex = (c: string, digits: number): string => c.charCodeAt(0).toString(16).padStart(digits, '0');

/**
 * Text for one line of output: a file name may hold a newline or other control characters (legal
 * on macOS and Linux), which would split one `rejected PATH: reason` line in two for the script
 * reading it, or move the terminal's cursor. They are shown escaped, as `\n`, `\x1b` or `\u009b`;
 * other text (é, emoji, CJK) is left as it is.
 */
export const oneLine = (s: string): string =>
  s.replace(CONTROL, (c) => ESCAPES[c] ?? (c > '\u007f' ? `\\u${hex(c, 4)}` : `\\x${hex(c, 2)}`));

/**
 * JSON for a terminal: JSON.stringify escapes the C0 control characters but not DEL or the C1
 * ones, which are written as `\u007f` or `\u009b` here too, so the output is still valid JSON and holds
 * none of what oneLine escapes.
 */
export const terminalJson = (v: unknown, indent?: number): string =>
  (JSON.stringify(v, null, indent) ?? String(v)).replace(JSON_UNESCAPED, (c) => `\\u${hex(c, 4)}`);

/** A stored setting this build did not use, as `mediadesk settings get` and the web host say it on stderr. */
export const ignoredSettingNote = (i: IgnoredSetting): string => `note: ${oneLine(ignoredSettingText(i))}\n`;

/** Why the settings file could not be read (its JSON error may quote the file's own bytes), on one line. */
export const unreadableSettingsWarning = (unreadable: string, then: string): string => `warning: ${oneLine(unreadable)}; ${then}\n`;
