import {
  FAMILIES,
  FAMILY_NAMES,
  GENERATED_TOOLS,
  makesWords,
  TOOLS,
  toolsOfFamily,
  toolsOfGroup,
  type Family,
  type ToolEntry,
} from '../../../shared/catalogue/index.ts';

/**
 * The generated tools (every other create of the reference) the Studio offers beside its curated
 * ones: each batches over a folder of what its batch field takes (images, videos or audio), or
 * takes no folder at all.
 */
export const STUDIO_GENERATED: readonly ToolEntry[] = GENERATED_TOOLS;

/** The tools each screen offers, read from the catalogue's groups and families: a new entry shows up by itself. */
export const STUDIO_TOOLS: readonly ToolEntry[] = [
  ...TOOLS.filter((t) => t.group === 'image' || t.group === 'prompt'),
  ...STUDIO_GENERATED,
];

/** Generated tools by what they make from what ("image from text"), in the order first met. */
function byMakes(tools: readonly ToolEntry[]): { label: string; tools: ToolEntry[] }[] {
  const groups = new Map<string, ToolEntry[]>();
  for (const t of tools) {
    const label = `More: ${makesWords(t)}`;
    groups.set(label, [...(groups.get(label) ?? []), t]);
  }
  return [...groups].map(([label, list]) => ({ label, tools: list }));
}

/** The Studio's tool picker, by group, then the generated tools by what they make and take. */
export const STUDIO_SECTIONS: readonly { label: string; tools: readonly ToolEntry[] }[] = [
  { label: 'Image', tools: toolsOfGroup('image') },
  { label: 'Prompt', tools: toolsOfGroup('prompt') },
  ...byMakes(STUDIO_GENERATED),
];

/** The Studio's sections with the favourites (in the order starred) and the recently used ahead of them. */
export function sectionsFirst(favourites: readonly string[], recent: readonly string[]) {
  const pick = (ids: readonly string[]) => ids.flatMap((id) => STUDIO_TOOLS.filter((t) => t.id === id));
  const fav = pick(favourites);
  const used = pick(recent.filter((id) => !favourites.includes(id)));
  const ahead = new Set([...fav, ...used]);
  return [
    ...(fav.length ? [{ label: 'Favourites', tools: fav }] : []),
    ...(used.length ? [{ label: 'Recently used', tools: used }] : []),
    ...STUDIO_SECTIONS.map((s) => ({ ...s, tools: s.tools.filter((t) => !ahead.has(t)) })).filter(
      (s) => s.tools.length,
    ),
  ];
}

/** One tab of the Video builder: a model family, its variant tools, and the family its references are checked as. */
export interface VideoFamily {
  id: string;
  label: string;
  tools: readonly string[];
  check: Family;
}

export const VIDEO_FAMILIES: readonly VideoFamily[] = FAMILIES.flatMap((family) => {
  const tools = toolsOfFamily(family)
    .filter((t) => t.group === 'video')
    .map((t) => t.id);
  return tools.length ? [{ id: family, label: FAMILY_NAMES[family].title, tools, check: family }] : [];
});

/** Every tool the Video builder offers, in tab order. */
export const VIDEO_TOOLS: readonly ToolEntry[] = VIDEO_FAMILIES.flatMap((f) =>
  f.tools.map((id) => TOOLS.find((t) => t.id === id)!),
);

export const MUSIC_TOOLS: readonly string[] = toolsOfGroup('audio').map((t) => t.id);
