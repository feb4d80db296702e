/**
 * Citations (@Image1, @Video2, @Audio1) number a reference list in order, so taking an item out
 * renumbers every later one. Left alone, the prompt's @Image2 would then quietly name the file
 * that was @Image3: a paid request made with the wrong reference and no error to say so.
 */
export interface CitationEdit {
  text: string;
  /** How many citations of the removed item were taken out. */
  dropped: number;
  /** How many later citations were moved down by one. */
  moved: number;
}

/**
 * `text` once item `removed` (1-based) leaves the `prefix` list: its citations are taken out and later
 * ones move down one, so each still names the same file. Matches exactly what the mention rule checks.
 */
export function withoutCitation(text: string, prefix: string, removed: number): CitationEdit {
  let dropped = 0;
  let moved = 0;
  const re = new RegExp(`( ?)@${prefix}(\\d+)( ?)`, 'g');
  const out = text.replace(re, (whole, before: string, digits: string, after: string) => {
    const n = Number(digits);
    if (n === removed) {
      dropped++;
      // One space stays only between two words ("of @Image1 and" reads "of and", not "of  and").
      return before && after ? ' ' : '';
    }
    if (n > removed) {
      moved++;
      return `${before}@${prefix}${n - 1}${after}`;
    }
    return whole;
  });
  return { text: out, dropped, moved };
}
