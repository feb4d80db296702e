import { DEFAULT_SLUGS, TOOLS, type Slugs, type ToolEntry } from './catalogue/index.ts';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A tool's create path as a pattern over what the team's credit usage names it by (the path under
 * /v1/ai/): slugs as given, path fields (a resolution) as a group each.
 */
function pathPattern(t: ToolEntry, slugs: Slugs): RegExp {
  let re = '';
  let at = 0;
  const template = t.create.replace(/^\/v1\/ai\//, '');
  for (const m of template.matchAll(/\{([a-z0-9_]+)\}/g)) {
    re += escapeRe(template.slice(at, m.index));
    const key = m[1];
    const field = t.fields.find((f) => f.name === key && f.in === 'path');
    if (key in slugs) re += escapeRe(slugs[key as keyof Slugs]);
    else if (field?.kind === 'enum') re += `(${field.options.map(escapeRe).join('|')})`;
    else re += '([^/]+)';
    at = m.index + m[0].length;
  }
  return new RegExp(`^${re}${escapeRe(template.slice(at))}$`);
}

/**
 * The name people know a tool by, from the name the team's credit usage gives it
 * (`video/seedance-2-5-pro-720p` is "Video 2.5 (multi-shot), 720p"): the catalogue's title, with the
 * path's choices (a resolution) after it. A path no tool makes reads as words ("Video: some model").
 */
export function usageToolName(path: string, slugs: Slugs = DEFAULT_SLUGS): string {
  for (const t of TOOLS) {
    const m = pathPattern(t, { ...DEFAULT_SLUGS, ...slugs }).exec(path);
    if (m) return [t.title, ...m.slice(1)].join(', ');
  }
  const words = path
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/[-_]+/g, ' ').trim());
  if (!words.length) return path;
  const head = words[0].charAt(0).toUpperCase() + words[0].slice(1);
  return words.length === 1 ? head : `${head}: ${words.slice(1).join(' ')}`;
}
