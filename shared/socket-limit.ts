/**
 * The most characters of text presets.import takes (its schema's bound, contract/presets.ts): the
 * largest payload a command has. Here, not read from the schema, so the page loads no schemas for it.
 */
export const PRESET_TEXT_MAX_CHARS = 5_000_000;

/**
 * The largest message, in bytes, the web host's socket reads (ws refuses a longer frame by its
 * header, before buffering it, and closes with 1009): a preset file of the most characters, each at
 * most 3 bytes in the JSON a page sends (a character of a JSON file is 1 to 3 bytes of UTF-8 there,
 * an escaped quote or newline 2, a surrogate pair 4 for two), and 64 KB for the rest of the message.
 */
export const MAX_MESSAGE_BYTES = PRESET_TEXT_MAX_CHARS * 3 + 64 * 1024;

/** The UTF-8 length of `text`, counted only when it could be over `limit` (a UTF-16 unit is at most 3 bytes). */
export function overLimit(text: string, limit = MAX_MESSAGE_BYTES): number | null {
  if (text.length * 3 <= limit) return null;
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    // A surrogate pair is 4 bytes for its two units; a lone surrogate is sent as U+FFFD, 3.
    const low = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
      bytes += 2;
      i++;
    } else bytes += c < 0x800 ? 1 : 2;
  }
  return bytes > limit ? bytes : null;
}
