/**
 * Beyond C0, what terminals and line readers do not show as text: DEL and C1 (U+009B can start an
 * escape, U+0085 break a line), U+2028/U+2029 (line breaks to splitlines), and the bidi controls
 * that reorder a name on screen ("Trojan Source"). RTL letters, emoji and CJK are text.
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
