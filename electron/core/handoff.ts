import { statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { TOOLS } from '../../shared/catalogue/index.ts';
import { DeskError, invalidRequest } from '../../shared/contract/define.ts';
import {
  handOffToolSchema,
  LINK_MAX,
  LINK_PARAMS,
  LINK_SCHEME,
  PATH_MAX,
  type HandOff,
  type LinkHost,
  type StudioHandOff,
} from '../../shared/contract/handoff.ts';
import { EXT_FORMAT } from '../../shared/validation/extensions.ts';

/**
 * Files, folders and links handed to the desktop app from outside its window, as plain functions
 * of argv, the working folder and the disk (main applies them: electron/main/index.ts). Nothing
 * here starts work: a hand-off only fills the Studio, or opens the Queue or Audit on an id.
 */

const DEFAULT_FORMATS = { image: ['jpeg', 'png'], video: ['mp4', 'mov'], audio: [] } as const;

/** Extensions of the images and videos some catalogue tool takes as its input. */
export const HANDOFF_EXTENSIONS: ReadonlySet<string> = new Set(
  Object.keys(EXT_FORMAT).filter((ext) =>
    TOOLS.some((t) =>
      t.fields.some(
        (f) =>
          (f.kind === 'media' || f.kind === 'mediaList') &&
          f.media !== 'audio' &&
          (f.formats ?? DEFAULT_FORMATS[f.media]).includes(EXT_FORMAT[ext]),
      ),
    ),
  ),
);

/** What a start's argv names: paths, links, `--tool`; Chromium's and macOS's own flags are left out. */
export interface GivenArgs {
  paths: string[];
  links: string[];
  tool: string | null;
}

/**
 * The person's part of a process's argv: after the executable when packed, after `electron APP`
 * in development (process.defaultApp). `--` ends the options (`-- -x.png` is a file).
 */
export function givenArgs(argv: readonly string[], packed: boolean): GivenArgs {
  const args = argv.slice(packed ? 1 : 2);
  const out: GivenArgs = { paths: [], links: [], tool: null };
  const take = (a: string) => (isLink(a) ? out.links : out.paths).push(a);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      out.paths.push(...args.slice(i + 1));
      break;
    }
    if (a === '--tool' && i + 1 < args.length) out.tool = args[++i];
    else if (a.startsWith('--tool=')) out.tool = a.slice('--tool='.length);
    // Electron adds --allow-file-access-from-files and others to a second start; macOS adds -psn_0_N.
    else if (a.startsWith('-')) continue;
    else if (a) take(a);
  }
  return out;
}

const isLink = (a: string) => a.toLowerCase().startsWith(`${LINK_SCHEME}:`);

/** Files and folders to the Studio: each path resolved against `cwd` and looked at on disk. */
export function handOffFiles(paths: readonly string[], cwd: string, tool: string | null = null): StudioHandOff {
  const h: StudioHandOff = { screen: 'studio', tool: null, preset: null, inputs: [], refused: [] };
  if (tool !== null) {
    const checked = handOffToolSchema.safeParse(tool);
    if (checked.success) h.tool = checked.data;
    else h.refused.push({ path: `--tool ${tool}`, reason: `"${tool}" ${checked.error.issues[0].message}` });
  }
  const seen = new Set<string>();
  for (const given of paths) {
    if (given.includes('\0') || given.length > PATH_MAX) {
      h.refused.push({ path: given.slice(0, 200), reason: 'is not a path' });
      continue;
    }
    const abs = resolve(cwd, given);
    if (seen.has(abs)) continue;
    seen.add(abs);
    const why = refusal(abs);
    if (typeof why === 'string') h.refused.push({ path: abs, reason: why });
    else h.inputs.push({ path: abs, kind: why.kind });
  }
  return h;
}

function refusal(abs: string): string | { kind: 'file' | 'folder' } {
  let st;
  try {
    st = statSync(abs);
  } catch {
    return 'does not exist';
  }
  if (st.isDirectory()) return { kind: 'folder' };
  if (!st.isFile()) return 'is not a file or folder';
  const ext = extname(abs).slice(1).toLowerCase();
  if (HANDOFF_EXTENSIONS.has(ext)) return { kind: 'file' };
  return `is not an image or video a tool takes (${ext ? `.${ext}` : 'no extension'}; takes ${[...HANDOFF_EXTENSIONS].map((e) => `.${e}`).join(' ')})`;
}

/**
 * A `mediadesk://` link, checked as any input: a known host, its known parameters each once and
 * valid (LINK_PARAMS), a folder that exists. Throws a DeskError (`invalid`) saying what is wrong.
 */
export function parseLink(link: string): HandOff {
  if (link.length > LINK_MAX) throw new DeskError('invalid', `the link is longer than ${LINK_MAX} characters`);
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    throw new DeskError('invalid', `"${link.slice(0, 200)}" is not a link`);
  }
  if (u.protocol !== `${LINK_SCHEME}:`) throw new DeskError('invalid', `not a ${LINK_SCHEME}:// link`);
  const host = u.hostname.toLowerCase();
  if (!Object.hasOwn(LINK_PARAMS, host))
    throw new DeskError(
      'invalid',
      `${LINK_SCHEME}://${host.slice(0, 64)} is not a link MediaDesk opens (it opens ${Object.keys(LINK_PARAMS)
        .map((h) => `${LINK_SCHEME}://${h}`)
        .join(', ')})`,
    );
  if (u.pathname !== '' && u.pathname !== '/')
    throw new DeskError('invalid', `${LINK_SCHEME}://${host} takes parameters only, not a path`);
  const params: Record<string, string> = {};
  for (const [k, v] of u.searchParams) {
    if (Object.hasOwn(params, k)) throw new DeskError('invalid', `${k} is given more than once`);
    params[k] = v;
  }
  const parsed = LINK_PARAMS[host as LinkHost].safeParse(params);
  if (!parsed.success) {
    const e = invalidRequest(parsed.error.issues);
    throw new DeskError('invalid', `${LINK_SCHEME}://${host}: ${e.message}`, e.invalid);
  }
  if (host === 'queue') return { screen: 'queue', batchId: (parsed.data as { batch: string }).batch };
  if (host === 'audit') return { screen: 'audit', eventId: (parsed.data as { event: string }).event };
  const { tool, folder, preset } = parsed.data as { tool?: string; folder?: string; preset?: string };
  const h: StudioHandOff = { screen: 'studio', tool: tool ?? null, preset: preset ?? null, inputs: [], refused: [] };
  if (folder !== undefined) {
    const st = statSync(folder, { throwIfNoEntry: false });
    if (!st)
      throw new DeskError('invalid', `folder: ${folder} does not exist`, [
        { field: 'folder', reason: 'does not exist' },
      ]);
    if (!st.isDirectory())
      throw new DeskError('invalid', `folder: ${folder} is not a folder`, [
        { field: 'folder', reason: 'is not a folder' },
      ]);
    h.inputs.push({ path: resolve(folder), kind: 'folder' });
  }
  return h;
}

/** A link as a hand-off that never throws: a refused link opens the Studio saying why, and nothing else. */
export function linkHandOff(link: string): HandOff {
  try {
    return parseLink(link);
  } catch (err) {
    const reason = err instanceof DeskError ? err.message : String(err);
    return { screen: 'studio', tool: null, preset: null, inputs: [], refused: [{ path: link.slice(0, 200), reason }] };
  }
}

/**
 * Everything a start hands over (`argv` of the first start or of a second one, with that start's
 * working folder): the files as one Studio hand-off, then each link. Empty for a plain start.
 */
export function handOffFromArgv(argv: readonly string[], opts: { packed: boolean; cwd: string }): HandOff[] {
  const given = givenArgs(argv, opts.packed);
  const out: HandOff[] = [];
  if (given.paths.length || given.tool !== null) out.push(handOffFiles(given.paths, opts.cwd, given.tool));
  for (const link of given.links) out.push(linkHandOff(link));
  return out;
}

/**
 * What the person handed over is theirs to read as inputs, as a drop or the chooser is
 * (PathPolicy.grant): each file or folder a hand-off puts in the Studio. Returns the hand-off.
 */
export function grantHandOff<H extends HandOff>(h: H, grant: (path: string) => void): H {
  if (h.screen === 'studio') for (const i of h.inputs) grant(i.path);
  return h;
}

/**
 * Hand-offs that came together as one: macOS sends `open-file` once per file of a single Open
 * with, so following Studio hand-offs join (their inputs and refusals; the last tool or preset named).
 */
export function mergeHandOffs(hs: readonly HandOff[]): HandOff[] {
  const out: HandOff[] = [];
  for (const h of hs) {
    const last = out.at(-1);
    if (h.screen !== 'studio' || last?.screen !== 'studio') {
      out.push(h);
      continue;
    }
    const seen = new Set(last.inputs.map((i) => i.path));
    out[out.length - 1] = {
      screen: 'studio',
      tool: h.tool ?? last.tool,
      preset: h.preset ?? last.preset,
      inputs: [...last.inputs, ...h.inputs.filter((i) => !seen.has(i.path))],
      refused: [...last.refused, ...h.refused],
    };
  }
  return out;
}

/** A hand-off held until the window is up, with whether a mediadesk:// link brought it. */
export interface HeldHandOff {
  h: HandOff;
  link: boolean;
}

/**
 * What is told to the window of what was held: joined as one Open with (mergeHandOffs), less the
 * links while Settings > System turns links off (`dropped` counts those, for the log).
 */
export function handOffsToSend(held: readonly HeldHandOff[], linksOn: boolean): { send: HandOff[]; dropped: number } {
  const kept = held.filter((x) => linksOn || !x.link);
  return { send: mergeHandOffs(kept.map((x) => x.h)), dropped: held.length - kept.length };
}
