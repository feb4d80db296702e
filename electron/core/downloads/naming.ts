import { createHash } from 'node:crypto';
import { extname, basename, join, sep } from 'node:path';
import type { ResultKind, ToolEntry } from '../../../shared/catalogue/index.ts';
import { isLocalPath } from '../../../shared/catalogue/fields.ts';
import {
  hasWindowsPathLimit,
  portableName,
  UNSAFE_NAME_CHARS as UNSAFE,
  windowsPathProblem,
} from '../../../shared/file-names.ts';

export interface NameParts {
  /** Input file name without extension, or a stand-in for prompt-only jobs. */
  name: string;
  tool: string;
  ext: string;
  batch: string;
  date: Date;
}

const CONTENT_EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/jpg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'text/plain': 'txt',
};

export const KIND_EXT: Record<ResultKind, string> = { image: 'png', video: 'mp4', audio: 'mp3', text: 'txt' };

/** Every extension a result of this kind may get, for "output already exists" checks. */
export const KIND_EXTS: Record<ResultKind, readonly string[]> = {
  image: ['png', 'jpg', 'jpeg', 'webp'],
  video: ['mp4', 'mov', 'webm'],
  audio: ['mp3', 'wav', 'ogg'],
  text: ['txt'],
};

/** The file extension of a result: its content type first, then its URL, then the tool's kind. */
export function extensionOf(url: string | null, contentType: string | undefined, kind: ResultKind): string {
  if (kind === 'text') return 'txt';
  const ct = contentType?.split(';')[0].trim().toLowerCase();
  if (ct && CONTENT_EXT[ct]) return CONTENT_EXT[ct];
  if (url) {
    try {
      const e = extname(new URL(url).pathname).slice(1).toLowerCase();
      if (e === 'jpeg') return 'jpg';
      if (/^[a-z0-9]{2,5}$/.test(e) && KIND_EXTS[kind].includes(e)) return e;
    } catch {
      // not a URL: fall through to the kind's default
    }
  }
  return KIND_EXT[kind];
}

const stamp = (d: Date) => d.toISOString().slice(0, 10);

/**
 * A result's file name from the template. Several results of one job get `_2`, `_3` (before the
 * extension) unless the template places `{n}` itself.
 */
export function renderName(template: string, parts: NameParts, index: number): string {
  const values: Record<string, string> = {
    name: parts.name,
    tool: parts.tool,
    ext: parts.ext,
    batch: parts.batch.slice(0, 8),
    date: stamp(parts.date),
    n: String(index + 1),
  };
  // Valid on every system (see portableName): `con.png` or `photo.` from a photo of that name is not.
  let out = portableName(
    template.replace(/\{([a-z]+)\}/g, (m, k: string) => values[k] ?? m),
    `result.${parts.ext}`,
  );
  if (index > 0 && !template.includes('{n}')) {
    const e = extname(out);
    out = `${out.slice(0, out.length - e.length)}_${index + 1}${e}`;
  }
  return out;
}

/** `photo_upscale.png` -> `photo_upscale-2.png`: a collision never overwrites a user's file. */
export function withCollisionSuffix(path: string, k: number): string {
  if (k <= 1) return path;
  const e = extname(path);
  return `${path.slice(0, path.length - e.length)}-${k}${e}`;
}

/**
 * The most bytes of an input's name a result's name keeps, of the usual 255 per name: the rest is
 * room for the template (at most 60 characters), a collision suffix and `.part`, so a long input
 * name cannot make a result name no download can create, after the task was paid for.
 */
const MAX_STEM_BYTES = 150;

/** How much of a prompt names a result made from a prompt alone. */
const PROMPT_STEM_WORDS = 6;
const PROMPT_STEM_CHARS = 48;

/** The first words of a prompt as a file name: `a-red-fox-in-fresh-snow`; '' when it has none. */
function promptStem(prompt: string): string {
  const words = prompt.normalize('NFC').replace(UNSAFE, ' ').split(/\s+/).filter(Boolean);
  return [...words.slice(0, PROMPT_STEM_WORDS).join('-')]
    .slice(0, PROMPT_STEM_CHARS)
    .join('')
    .replace(/[-.]+$/, '');
}

/**
 * The one naming rule of results (the `{name}` of a job's or an app run's results): its input's
 * name, shortened when long (see MAX_STEM_BYTES); without one, the prompt's first words; then a
 * reference file's name; else `fallback` (by default the job: `job-<id>`).
 */
export function stemOf(
  inputPath: string | null,
  jobId: string,
  prompt?: unknown,
  more: { reference?: string | null; fallback?: string } = {},
): string {
  const fileStem = (p: string) => shortened(basename(p, extname(p)));
  if (inputPath) return fileStem(inputPath);
  return (
    (typeof prompt === 'string' && promptStem(prompt)) ||
    (more.reference && fileStem(more.reference)) ||
    (more.fallback ?? `job-${jobId.slice(0, 8)}`)
  );
}

/**
 * The `{name}` of a job's results: its batch input, else the local file of its parameters' single
 * media field (the video to upscale, a start frame), else its prompt, else a local reference file.
 */
export function jobStem(
  tool: Pick<ToolEntry, 'fields'>,
  job: { id: string; inputPath: string | null; params: Record<string, unknown> },
): string {
  const local = (kind: 'media' | 'mediaList') =>
    tool.fields
      .filter((f) => f.kind === kind && f.in !== 'path')
      .flatMap((f) => [job.params[f.name]].flat())
      .find(isLocalPath) ?? null;
  return stemOf(job.inputPath ?? local('media'), job.id, job.params.prompt, { reference: local('mediaList') });
}

/**
 * `stem` in at most `maxBytes` of UTF-8: the start of a long name and a hash of all of it, so two
 * long names that start alike stay two files.
 */
export function shortened(stem: string, maxBytes = MAX_STEM_BYTES): string {
  if (Buffer.byteLength(stem) <= maxBytes) return stem;
  const hash = createHash('sha256').update(stem).digest('hex').slice(0, 8);
  let kept = '';
  let bytes = 0;
  // By code point, so a character is never cut in half.
  for (const ch of stem) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > maxBytes - hash.length - 1) break;
    kept += ch;
    bytes += b;
  }
  return `${kept}~${hash}`;
}

export const partPathOf = (finalPath: string) => `${finalPath}.part`;
/** The downloaded part with the source's metadata written in; no longer than the part's name. */
export const metaPartPathOf = (finalPath: string) => `${finalPath}.meta`;

/**
 * The folder of an input's results: its input's sub-folder (relative to the chosen folder) inside
 * the output folder, each name made portable as result names are (`con` becomes `con_`, `draft.`
 * becomes `draft`), so an output on an exFAT or NTFS drive, or copied to Windows, can hold it.
 */
export const outputDirOf = (outDir: string, relDir: string) =>
  relDir ? join(outDir, ...relDir.split(sep).map((d) => portableName(d, '_'))) : outDir;

/** What a result's name may still gain after renderName: a job's later results' `_10` and a collision's `-10`. */
export const RESULT_SUFFIX_ROOM = 6;

/** The longest extension results of this kind get (never jpeg: extensionOf writes jpg), for a path's longest form. */
export const longestExt = (kind: ResultKind) =>
  KIND_EXTS[kind].filter((e) => e !== 'jpeg').reduce((a, b) => (b.length > a.length ? b : a));

/**
 * Why the results of `inputPath` (null: none) would have a path too long for Windows, with the
 * longest extension the tool's results get, or null. Asked before queuing: an unwritable result is a
 * paid task lost, and shortening it instead would hide it from resultNameReader.
 */
export function resultPathProblem(
  result: {
    outDir: string;
    relDir: string;
    template: string;
    tool: string;
    kind: ResultKind;
    inputPath: string | null;
  },
  platform: string,
): string | null {
  // Asked of every input of a batch: where no limit applies, no name is rendered.
  if (!hasWindowsPathLimit(platform)) return null;
  const ext = longestExt(result.kind);
  const name = renderName(
    result.template,
    { name: stemOf(result.inputPath, '00000000'), tool: result.tool, ext, batch: '00000000', date: new Date() },
    0,
  );
  return windowsPathProblem(join(outputDirOf(result.outDir, result.relDir), name), platform, RESULT_SUFFIX_ROOM);
}

/**
 * The `{name}` a file's results carry in their names, as renderName writes it, in NFC: macOS may
 * list a name in the other Unicode form (NFD) than the one it was written in.
 */
export const nameInResults = (path: string) => stemOf(path, '').replace(UNSAFE, '_').normalize('NFC');

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Reads a file name back as a result's `{name}` (in NFC) and tool, with a `_2` or `-2` suffix; only
 * templates ending in `.{ext}` with both `{name}` and `{tool}` can be read back. A name is no proof:
 * the caller also wants the photo of that name beside it.
 */
export function resultNameReader(
  templates: readonly string[],
  tools: readonly { id: string; result: ResultKind }[],
): (fileName: string) => { name: string; tool: string } | null {
  const kindOf = new Map(tools.map((t) => [t.id, t.result]));
  const ids = [...kindOf.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escapeRe)
    .join('|');
  const readers = [...new Set(templates.map((t) => t.normalize('NFC')))]
    .filter((t) => t.endsWith('.{ext}') && t.includes('{name}') && t.includes('{tool}'))
    .map((t) => {
      const body = t.slice(0, -'.{ext}'.length);
      const seen = new Set<string>();
      const token: Record<string, string> = {
        batch: '[0-9a-f]{0,8}',
        date: '\\d{4}-\\d{2}-\\d{2}',
        n: '\\d+',
        ext: '[a-z0-9]+',
      };
      let re = '';
      let at = 0;
      for (const m of body.matchAll(/\{([a-z]+)\}/g)) {
        re += escapeRe(body.slice(at, m.index).replace(UNSAFE, '_'));
        const k = m[1];
        if (k === 'name' || k === 'tool') re += seen.has(k) ? `\\k<${k}>` : `(?<${k}>${k === 'name' ? '.+' : ids})`;
        else re += token[k] ?? escapeRe(m[0]);
        seen.add(k);
        at = m.index + m[0].length;
      }
      re += escapeRe(body.slice(at).replace(UNSAFE, '_'));
      return new RegExp(`^${re}${t.includes('{n}') ? '' : '(?:_\\d+)?'}(?:-\\d+)?\\.(?<ext>[a-z0-9]+)$`, 's');
    });
  // Names and templates compared in NFC, as nameInResults: macOS lists `Café` written in NFC as NFD.
  return (fileName) => {
    for (const re of readers) {
      const g = re.exec(fileName.normalize('NFC'))?.groups;
      if (g && KIND_EXTS[kindOf.get(g.tool)!].includes(g.ext)) return { name: g.name, tool: g.tool };
    }
    return null;
  };
}
