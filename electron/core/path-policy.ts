import { readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';
import { PATH_FIELDS, type PathKind } from '../../shared/contract/paths.ts';
import { isWithin } from './paths.ts';

/** The real path of `p`, or of its nearest existing folder with the rest appended: a link on the way is judged by its target. */
function realOrNearest(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const up = dirname(abs);
    return up === abs ? abs : resolve(realOrNearest(up), abs.slice(up.length + (up.endsWith('/') ? 0 : 1)));
  }
}

const insideReal = (p: string, root: string) => isWithin(realOrNearest(p), realOrNearest(root));

/** The values at a PATH_FIELDS name: `a.b` reads inside an object, `a[].b` in each of a list's items. */
function valuesAt(payload: unknown, field: string): unknown[] {
  let at: unknown[] = [payload];
  for (const part of field.split('.')) {
    const name = part.replace(/\[\]$/, '');
    at = at.flatMap((v) => {
      const value = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[name] : undefined;
      return Array.isArray(value) ? value : [value];
    });
  }
  return at;
}

export interface PathPolicyOptions {
  /** The uploads' folder: what a page reads is in it, or was granted. */
  inbox: string;
  outputRoot: () => string;
  /** Folders MediaDesk already put results in: a page may choose one (or a folder inside one) as the output folder. */
  usedOutputs: () => string[];
  /** The hot folders' watched folders: the person added them, so a page may name inputs inside them. */
  watched?: () => string[];
  /** How the person gives this host a file or folder, ending a refusal (the desktop app's chooser, the web host's --folder). */
  howToGive?: string;
}

/** How the web host's person gives it a path: a browser sends files, not paths; the host takes folders when started. */
export const GIVE_IN_WEB =
  'drop the files on the page (they are copied to the host), or restart the web host with --folder and a folder that holds it (mediadesk web --folder DIR), so it is read; a path typed in a page is read only inside such a folder';
/** How a desktop page's person gives MediaDesk a path: the chooser or a drop. */
export const GIVE_IN_DESKTOP =
  'choose it with Choose… (or drop it), so it is read; a path typed in a page is read only inside a file or folder you chose';

/**
 * Holds a page to PATH_FIELDS (the rule is there). Files and folders the person chose in the desktop
 * app (a drop, a picker: the preload tells main, which calls `grant`) may be read and sent as well
 * as uploads; the web host grants nothing, its inputs are uploads.
 */
export class PathPolicy {
  private readonly granted = new Set<string>();
  private readonly opts: PathPolicyOptions;
  constructor(opts: PathPolicyOptions) {
    this.opts = opts;
  }

  /** A file or folder the person gave (a drop, a native chooser, the web host's --folder): inputs inside it may be read. */
  grant(path: string): void {
    this.granted.add(resolve(path));
  }

  /** Whether `p` lies in what the person gave: an upload, a granted file or folder, a watched hot folder. */
  gave(p: string): boolean {
    return [this.opts.inbox, ...(this.opts.watched?.() ?? []), ...this.granted].some((root) => insideReal(p, root));
  }

  /** Why `p` is refused as a file or folder the person did not give: names it and how to give one. */
  private notGiven(p: string): string {
    return `${resolve(p)} is not a file or folder you gave MediaDesk: ${this.opts.howToGive ?? GIVE_IN_DESKTOP}`;
  }

  /**
   * Throws a DeskError (`forbidden`) unless `path`, an input a page named to be read and sent to the
   * service, is one the person gave: an upload, inside a file or folder they dropped or chose (granted),
   * inside a hot folder they watch, or a result in the output folder. A link is judged by its target.
   */
  checkInput(field: string, path: string): void {
    const why = this.problem('input', path);
    if (why) throw new DeskError('forbidden', `${field}: ${why}`, [{ field, reason: why }]);
  }

  /** Throws a DeskError (`forbidden`, naming the field) when a page's request breaks the rule. */
  check(command: string, payload: unknown): void {
    const fields = Object.hasOwn(PATH_FIELDS, command)
      ? (PATH_FIELDS as Record<string, Record<string, PathKind>>)[command]
      : undefined;
    if (!fields || typeof payload !== 'object' || payload === null) return;
    for (const [field, kind] of Object.entries(fields)) {
      for (const p of valuesAt(payload, field)) {
        if (typeof p !== 'string' || !p) continue;
        const why = this.problem(kind, p);
        if (why) throw new DeskError('forbidden', `${field}: ${why}`, [{ field, reason: why }]);
      }
    }
  }

  private problem(kind: PathKind, p: string): string | null {
    const root = this.opts.outputRoot();
    if (kind === 'results-folder')
      return insideReal(p, root)
        ? null
        : `${resolve(p)} is outside the output folder (${root}): results go to a folder inside it; choose another output folder in Settings`;
    if (kind === 'read') {
      if (this.granted.has(resolve(p)) || insideReal(p, this.opts.inbox)) return null;
      return `${resolve(p)} is not a file you gave MediaDesk: choose it with Choose files… (or drop it), so it is read`;
    }
    if (kind === 'input') {
      const given = [this.opts.inbox, this.opts.outputRoot(), ...(this.opts.watched?.() ?? []), ...this.granted];
      return given.some((root) => insideReal(p, root)) ? null : this.notGiven(p);
    }
    // A hot folder's files are sent as they arrive: only a folder the person gave (or a drop) is watched.
    if (kind === 'watched')
      return [this.opts.inbox, ...this.granted].some((root) => insideReal(p, root)) ? null : this.notGiven(p);
    if (kind === 'output-folder') {
      const abs = resolve(p);
      const st = statSync(abs, { throwIfNoEntry: false });
      if (!st?.isDirectory() || insideReal(abs, root) || readdirSync(abs).length === 0) return null;
      if (this.opts.usedOutputs().some((used) => insideReal(abs, used))) return null;
      return `${abs} already holds files MediaDesk did not write: choose a new or empty folder (or set it with mediadesk settings), so its files are not served`;
    }
    return null;
  }
}
