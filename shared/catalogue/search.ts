import type { MediaKind, ResultKind } from './kinds.ts';
import type { ToolEntry } from './tools.ts';

/**
 * Finding a tool by the words a person would type: its name, its model (the path it creates with),
 * what it makes and what it takes. One function for every screen that lists tools.
 */

/** The media a tool takes: its batch field's and each required media field's, else text. */
export function takesOf(tool: ToolEntry): readonly (MediaKind | 'text')[] {
  const kinds = new Set<MediaKind>();
  for (const f of tool.fields)
    if ((f.kind === 'media' || f.kind === 'mediaList') && (f.required || f.name === tool.batchField))
      kinds.add(f.media);
  return kinds.size ? [...kinds] : ['text'];
}

/** "image from image", "audio from text": the words a list shows under a tool's name. */
export const makesWords = (tool: ToolEntry): string => `${tool.result} from ${takesOf(tool).join(' and ')}`;

const WORDS: Record<ResultKind | MediaKind | 'text', string> = {
  image: 'image picture photo',
  video: 'video clip movie',
  audio: 'audio sound music speech',
  text: 'text prompt',
};

/** Everything a search looks in, lower-case. */
export function searchText(tool: ToolEntry): string {
  const options = tool.fields.flatMap((f) =>
    f.kind === 'enum' && (f.in === 'path' || f.name === 'engine') ? f.options : [],
  );
  return [
    tool.id,
    tool.title,
    tool.summary,
    tool.create.replace(/[{}]/g, ' '),
    tool.family ?? '',
    ...options,
    WORDS[tool.result],
    ...takesOf(tool).map((k) => WORDS[k]),
  ]
    .join(' ')
    .toLowerCase()
    .replace(/[-_/]+/g, ' ');
}

/** A word with its ending let go, so "isolate" finds isolation and "upscaling" the upscalers. */
function stem(w: string): string {
  const s = w.replace(/(ing|ed|es|e|s)$/, '');
  return s.length >= 5 ? s : w;
}

/**
 * The tools whose words hold every word of the query (in any order, any part of a word); "makes X"
 * and "takes X" ask what a tool makes or takes.
 */
export function searchTools<T extends ToolEntry>(tools: readonly T[], query: string): T[] {
  const asks: { makes: boolean; word: string }[] = [];
  const rest = query
    .toLowerCase()
    .replace(/\b(makes|takes)\s+(\S+)/g, (_, verb: string, word: string) => {
      asks.push({ makes: verb === 'makes', word: stem(word) });
      return ' ';
    })
    .replace(/[-_/]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .map(stem);
  const kindFits = (kind: keyof typeof WORDS, word: string) => WORDS[kind].split(' ').some((w) => w.startsWith(word));
  return tools.filter((t) => {
    const text = searchText(t);
    return (
      rest.every((w) => text.includes(w)) &&
      asks.every((a) => (a.makes ? [t.result] : takesOf(t)).some((k) => kindFits(k, a.word)))
    );
  });
}

/** Favourites first (in the order starred), then the recently used (newest first), then the rest in catalogue order. */
export function rankTools<T extends ToolEntry>(
  tools: readonly T[],
  favourites: readonly string[],
  recent: readonly string[],
): T[] {
  const rank = (t: T) => {
    const f = favourites.indexOf(t.id);
    if (f >= 0) return f;
    const r = recent.indexOf(t.id);
    return r >= 0 ? 1000 + r : 2000;
  };
  return tools
    .map((t, i) => ({ t, i, r: rank(t) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.t);
}
