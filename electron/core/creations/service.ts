import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DeskError, type DeskErrorCode } from '../../../shared/contract/define.ts';
import type { Creation, CreationsPage } from '../../../shared/contract/team.ts';
import { ApiError, type ApiClient } from '../api/client.ts';
import { downloadToPart, placeWithoutOverwrite, removeQuietly, sameFile } from '../downloads/download.ts';
import {
  extensionOf,
  metaPartPathOf,
  partPathOf,
  RESULT_SUFFIX_ROOM,
  shortened,
  withCollisionSuffix,
} from '../downloads/naming.ts';
import { creationProvenance, type ResultMetadata } from '../metadata/result-metadata.ts';
import { metadataSettingsOf, type MetadataSettings } from '../../../shared/settings.ts';
import { ensureFolder } from '../output-folder.ts';
import { portableName, WINDOWS_MAX_PATH, windowsPathProblem } from '../../../shared/file-names.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  return typeof v === 'number' ? String(v) : null;
}

const CREATIONS_ERROR_CODES: Record<number, DeskErrorCode> = { 400: 'invalid', 403: 'forbidden' };

function typeOf(item: Obj, family: string | null, url: string | null): string {
  const t = str(item.type) ?? (family && ['image', 'video', 'audio', 'text'].includes(family) ? family : null);
  if (t) return t;
  if (!url) return 'text';
  if (/\.(mp4|mov|webm)(\?|$)/i.test(url)) return 'video';
  if (/\.(mp3|wav|ogg)(\?|$)/i.test(url)) return 'audio';
  return 'image';
}

/**
 * One recent creation in the description's shape (`{id, reference, name, thumbnail: {url},
 * tool_name, created_at, creation: {url, family, tool, metadata}}`), or the flat one (`url`, `type`).
 * Its thumbnail URL beside it: the listing's own, else the file's for an image.
 */
export function creationOf(raw: unknown): { creation: Omit<Creation, 'thumbPath'>; thumbUrl: string | null } | null {
  const i = obj(raw);
  const c = obj(i.creation);
  // The uuid reference names a creation for good (flows take it as an input); the integer id is the fallback.
  const id = str(i.reference) ?? str(i.id) ?? str(c.identifier);
  if (!id) return null;
  const url = str(c.url) ?? str(c.raw) ?? str(i.url);
  const type = typeOf(i, str(c.family), url);
  const text = str(i.text) ?? str(obj(c.metadata).text);
  const thumbUrl = str(obj(i.thumbnail).url) ?? str(c.preview) ?? (type === 'image' ? url : null);
  return {
    creation: {
      id,
      name: str(i.name) ?? id,
      createdAt: str(i.created_at) ?? str(c.created_at),
      toolName: str(i.tool_name) ?? str(c.tool),
      type,
      url,
      text,
    },
    thumbUrl,
  };
}

const kindOf = (t: string) => (t === 'video' || t === 'audio' || t === 'text' ? t : 'image');

/**
 * Recent creations (free, newest first), read as the description shapes them (creationOf). Image thumbnails are copied into the data folder: the renderer's CSP loads no
 * remote images, and a creation's URL may expire.
 */
export class CreationsService {
  private readonly client: ApiClient;
  private readonly cacheDir: string;
  private readonly seen = new Map<string, Creation>();
  /** Whose path rules saved files keep (process.platform; see windowsPathProblem). */
  private readonly platform: string;

  /** Writes how a creation was made into it (and beside it) as the settings ask; absent: saved as downloaded. */
  private readonly saving: { metadata: ResultMetadata; settings: () => MetadataSettings } | null;

  constructor(
    client: ApiClient,
    cacheDir: string,
    platform: string = process.platform,
    saving: { metadata: ResultMetadata; settings: () => MetadataSettings } | null = null,
  ) {
    this.client = client;
    this.cacheDir = cacheDir;
    this.platform = platform;
    this.saving = saving;
  }

  async list(q: { page: number; perPage: number; tool?: string; thumbnails?: boolean }): Promise<CreationsPage> {
    let body: unknown;
    try {
      body = await this.client.get('/v1/creations/recent', {
        page: q.page,
        per_page: q.perPage,
        ...(q.tool ? { tool_name: q.tool } : {}),
      });
    } catch (err) {
      if (err instanceof ApiError)
        throw new DeskError(
          CREATIONS_ERROR_CODES[err.status ?? 0] ?? 'unavailable',
          err.describe(),
          err.invalidParams.length ? err.invalidParams : undefined,
        );
      throw err;
    }
    const b = obj(body);
    const raw = [b.data, body].find((l): l is unknown[] => Array.isArray(l)) ?? [];
    const items = await Promise.all(
      raw
        .map(creationOf)
        .filter((x) => x !== null)
        .map(async ({ creation, thumbUrl }): Promise<Creation> => {
          const c: Creation = {
            ...creation,
            thumbPath:
              q.thumbnails !== false && creation.type === 'image' && thumbUrl
                ? await this.thumbnail(creation.id, thumbUrl)
                : null,
          };
          this.seen.set(c.id, c);
          return c;
        }),
    );
    const pg = obj(obj(b.meta).pagination);
    const perPage = Number(pg.per_page) || q.perPage;
    const total = typeof pg.total === 'number' ? pg.total : null;
    let lastPage = Number(pg.last_page);
    // Unstated: from the total, else a short page is the last one.
    if (!lastPage && total !== null) lastPage = Math.max(1, Math.ceil(total / perPage));
    else if (!lastPage) lastPage = items.length < perPage ? q.page : q.page + 1;
    return { items, page: Number(pg.current_page) || q.page, perPage, lastPage, total };
  }

  /** Keyed by creation id, not URL: the host (the Sandbox's port) and the signed query change. */
  private async thumbnail(id: string, url: string): Promise<string | null> {
    const file = join(
      this.cacheDir,
      `${createHash('sha256').update(id).digest('hex').slice(0, 24)}.${extensionOf(url, undefined, 'image')}`,
    );
    if (await stat(file).catch(() => null)) return file;
    try {
      await mkdir(this.cacheDir, { recursive: true });
      await downloadToPart(url, partPathOf(file), { timeoutMs: 15_000 });
      if (!(await placeWithoutOverwrite(partPathOf(file), file)) && !(await sameFile(partPathOf(file), file)))
        return file;
      await removeQuietly(partPathOf(file));
      return file;
    } catch {
      await removeQuietly(partPathOf(file));
      return null;
    }
  }

  /** Downloads a creation seen in a listing into `outDir`, never overwriting a file. */
  async download(id: string, outDir: string): Promise<string> {
    const c = this.seen.get(id);
    if (!c)
      throw new DeskError('not_found', `creation ${id} is not in a listing this session; list recent creations first`);
    if (!c.url)
      throw new DeskError('invalid', `creation ${id} has no file to download${c.text ? ' (it is text)' : ''}`);
    const dir = resolve(outDir);
    await ensureFolder(dir);
    // A creation's name is anyone's to set: `aux`, `draft.` or `a:b` is a name Windows cannot hold.
    const ext = extensionOf(c.url, undefined, kindOf(c.type));
    const base = join(dir, `${this.fittingStem(dir, portableName(c.name, portableName(id, 'creation')), ext)}.${ext}`);
    const part = partPathOf(base);
    const twin = metaPartPathOf(base);
    await downloadToPart(c.url, part);
    // No local source: the creation carries only how the service says it was made.
    const saving = this.saving && {
      ...this.saving,
      provenance: creationProvenance(c),
      settings: metadataSettingsOf(this.saving.settings()),
    };
    const written =
      saving &&
      (
        await saving.metadata.writeInto(part, twin, {
          final: base,
          source: null,
          provenance: saving.provenance,
          settings: saving.settings,
        })
      ).written;
    const finished = written ? twin : part;
    try {
      for (let k = 1; ; k++) {
        const candidate = withCollisionSuffix(base, k);
        if ((await placeWithoutOverwrite(finished, candidate)) || (await sameFile(finished, candidate))) {
          if (saving?.settings.provenanceSidecar) await saving.metadata.writeSidecar(candidate, saving.provenance);
          return candidate;
        }
      }
    } finally {
      await removeQuietly(part);
      await removeQuietly(twin);
    }
  }

  /**
   * The creation's name as saved in `dir`: shortened (a hash keeps shortened names apart) where
   * its path would be too long for Windows, as a creation's name is anyone's and may be long;
   * refused, before the download, where even a short name would not fit.
   */
  private fittingStem(dir: string, stem: string, ext: string): string {
    const pathOf = (s: string) => join(dir, `${s}.${ext}`);
    if (!windowsPathProblem(pathOf(stem), this.platform, RESULT_SUFFIX_ROOM)) return stem;
    const room = WINDOWS_MAX_PATH - RESULT_SUFFIX_ROOM - pathOf('').length;
    if (room >= MIN_STEM) return shortened(stem, room);
    const problem = windowsPathProblem(pathOf(stem.slice(0, MIN_STEM)), this.platform, RESULT_SUFFIX_ROOM)!;
    throw new DeskError(
      'invalid',
      `output folder: the creation cannot be saved there: ${problem}; choose an output folder with a shorter path`,
      [{ field: 'outDir', reason: problem }],
    );
  }
}

/** The shortest a creation's name is cut to (see fittingStem): a few characters and the 9 of the hash. */
const MIN_STEM = 16;
