// Apart from text.ts, which needs the settings contract (and zod): the CLI's `--help` loads only this.
import { escapeJsonText, hexOf, UNSAFE_CHAR } from '../../shared/unsafe-text.ts';

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * One line of output: control characters in a file name (legal on macOS and Linux), line separators
 * and bidi overrides would split or reorder a `rejected PATH: reason` line, so they are shown escaped
 * (`\n`, `\x1b`, `\u202e`); other text is left as it is.
 */
export const oneLine = (s: string): string =>
  s.replace(UNSAFE_CHAR, (c) => ESCAPES[c] ?? (c > '\u007f' ? `\\u${hexOf(c, 4)}` : `\\x${hexOf(c, 2)}`));

/**
 * JSON for a terminal: JSON.stringify escapes the C0 control characters but not DEL, C1, the line
 * separators or the bidi controls, which are written as `\u009b` or `\u2028` here too, so the output
 * is still valid JSON, parses back to the same value, and holds none of what oneLine escapes.
 */
export const terminalJson = (v: unknown, indent?: number): string =>
  escapeJsonText(JSON.stringify(v, null, indent) ?? String(v));
