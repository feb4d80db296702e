/**
 * A prompt's "characters" as the spec's limits count them: Unicode code points, as a server
 * measuring a decoded string does. `.length` (UTF-16 units) counts an emoji twice; graphemes would
 * undercount. zod measures min and max the same way, so a field's bound and a prompt total agree.
 */
export function charCount(s: string): number {
  let n = s.length;
  // A high surrogate followed by a low one is one code point; a lone surrogate counts as one.
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
