/**
 * How the app counts a prompt's "characters" (api-spec "Limits": 40,000 characters; lite 20,000;
 * music 2,500). The spec does not define the unit; we count Unicode code points, as a server that
 * measures a decoded string does (len() of a str in Python, chars().count() in Rust, an SQL
 * CHAR_LENGTH). JavaScript's `.length` counts UTF-16 code units instead, so an emoji or a rare CJK
 * ideograph (outside the Basic Multilingual Plane) counted twice and a valid prompt was refused.
 * Grapheme clusters (what a person sees as one sign) would undercount: a family emoji is one
 * grapheme but five code points, and a server counting code points would refuse what we let pass.
 * zod (4.6) measures a string's min and max the same way, so a single field's bound and a family's
 * total over several prompts agree.
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
