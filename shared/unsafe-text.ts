/**
 * What a terminal or a line-reading tool does not show as text, beyond the C0 controls:
 * - DEL and C1 (U+0080..U+009F): some terminals take U+009B as CSI, the start of an escape
 *   sequence, and some tools U+0085 (NEL) as a line break;
 * - U+2028 and U+2029, the line and paragraph separators, which some terminals and tools (Python's
 *   splitlines, editors) take as line breaks: one record would read as two;
 * - the bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which
 *   reorder what follows them on screen ("Trojan Source"): a file name could display as another.
 * RTL letters themselves, é, emoji and CJK are text, and are left as they are.
 */
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069';

/** C0 and all of the above: what one line of terminal output must not hold raw. */
export const UNSAFE_CHAR = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
/** Of those, what JSON.stringify leaves as it is (it escapes the C0 controls itself). */
const JSON_UNESCAPED = new RegExp(`[${BEYOND_C0}]`, 'g');

export const hexOf = (c: string, digits: number): string => c.charCodeAt(0).toString(16).padStart(digits, '0');

/**
 * JSON text with those characters written as `\u2028` and the like: they can stand raw only inside
 * a JSON string, where the escape means the same character, so the text parses to the same value.
 */
export const escapeJsonText = (json: string): string => json.replace(JSON_UNESCAPED, (c) => `\\u${hexOf(c, 4)}`);
