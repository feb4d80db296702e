import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { imageSize } from 'image-size';
import {
  isLocalPath,
  placeholderFor,
  validateRequest,
  type Encoding,
  type Field,
  type ToolEntry,
} from '../../../shared/catalogue/index.ts';
import { ApiError, type InvalidParam } from '../api/client.ts';
import { checkBytes, inputCheckOf, type InputCheck } from '../batch/preflight.ts';
import { fsErrorWords } from '../batch/fs-error.ts';
import { inputGoneBad, uploadRefused } from '../queue/job-messages.ts';

const MIME: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jpe: 'image/jpeg',
  jfif: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};
export const mimeOf = (path: string) => MIME[extname(path).slice(1).toLowerCase()] ?? 'application/octet-stream';

const IMAGE_MIME: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
};

/**
 * The media type of a file's bytes: for an image its real format, not its name (a JPEG saved as
 * .png is common, and the type is declared to the API in data URIs and uploads); else by name.
 */
export function mimeOfContent(path: string, bytes: Buffer): string {
  if (mimeOf(path).startsWith('image/')) {
    try {
      const t = imageSize(bytes).type;
      if (t && IMAGE_MIME[t]) return IMAGE_MIME[t];
    } catch {
      // not an image after all: the name decides, and the pre-flight check says what is wrong
    }
  }
  return mimeOf(path);
}

/** A request that cannot be sent; nothing was paid. */
export class PreflightError extends Error {
  override name = 'PreflightError';
  readonly invalid: InvalidParam[];
  constructor(message: string, invalid: InvalidParam[] = []) {
    super(message);
    this.invalid = invalid;
  }
}

/** How a local file travels in this field: inline where it takes that, else uploaded and sent as its asset URL. */
export function localEncoding(field: Field & { encodings: readonly Encoding[] }): Encoding | null {
  if (field.encodings.includes('base64')) return 'base64';
  if (field.encodings.includes('dataUri')) return 'dataUri';
  if (field.encodings.includes('url') || field.encodings.includes('upload')) return 'url';
  return null;
}

/** Uploads a local file's bytes through the service's flow and gives the asset URL to send (Uploader). */
export type UploadInput = (bytes: Buffer, contentType: string) => Promise<string>;

export const batchFieldOf = (tool: ToolEntry) => {
  const f = tool.fields.find((x) => x.name === tool.batchField);
  return f && (f.kind === 'media' || f.kind === 'mediaList') ? f : null;
};

type MediaField = Extract<Field, { kind: 'media' | 'mediaList' }>;

/** Media fields of the body holding local paths (reference lists, keyframes), beside the batch field. */
export function localMediaFields(tool: ToolEntry, params: Record<string, unknown>): MediaField[] {
  return tool.fields.filter(
    (f): f is MediaField =>
      (f.kind === 'media' || f.kind === 'mediaList') &&
      f.in !== 'path' &&
      (f.kind === 'media'
        ? isLocalPath(params[f.name])
        : Array.isArray(params[f.name]) && (params[f.name] as unknown[]).some(isLocalPath)),
  );
}

/** The parameters with every local path replaced by a stand-in of the field's encoding, for validation. */
export function withPlaceholders(tool: ToolEntry, params: Record<string, unknown>): Record<string, unknown> {
  const out = { ...params };
  for (const f of localMediaFields(tool, params)) {
    out[f.name] =
      f.kind === 'media'
        ? placeholderFor(f)
        : (out[f.name] as unknown[]).map((x) => (isLocalPath(x) ? placeholderFor(f) : x));
  }
  return out;
}

/** Why a local file cannot go in this field, or null when it can. */
export function localFileProblem(tool: ToolEntry, field: MediaField): string | null {
  if (localEncoding(field) !== null) return null;
  return `${tool.title} takes ${field.name} in no form a local file can be sent in`;
}

async function encodeLocal(
  tool: ToolEntry,
  field: MediaField,
  path: string,
  upload: UploadInput,
  check?: InputCheck,
  sending?: (bytes: Buffer) => void,
): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new PreflightError(inputGoneBad(path, `could not be read (${fsErrorWords(err)})`), [
      { field: field.name, reason: `${path} could not be read (${fsErrorWords(err)})` },
    ]);
  }
  // Checked when queued, and again on the very bytes sent: the file may have changed since (a
  // sync still writing it, a new version saved over it), and a task that cannot succeed is paid.
  const changed = check ? await checkBytes(check, bytes) : null;
  if (changed)
    throw new PreflightError(inputGoneBad(path, `${changed} (checked again before sending)`), [
      { field: field.name, reason: `${path} ${changed}` },
    ]);
  sending?.(bytes);
  const encoding = localEncoding(field);
  if (encoding === 'base64') return bytes.toString('base64');
  if (encoding === 'dataUri') return `data:${mimeOfContent(path, bytes)};base64,${bytes.toString('base64')}`;
  if (encoding === 'url') {
    return upload(bytes, mimeOfContent(path, bytes)).catch((err: unknown) => {
      // Sending the same bytes again gets the same answer (too large, a URL that refuses them): the
      // job fails, naming the file. Anything else (unreachable, busy, 408/429, 5xx) is thrown on, and the job waits.
      if (
        err instanceof ApiError &&
        err.kind === 'http' &&
        err.status! >= 400 &&
        err.status! < 500 &&
        err.status !== 408 &&
        err.status !== 429
      ) {
        throw new PreflightError(uploadRefused(path, err), [
          { field: field.name, reason: `${path}: its upload was refused (HTTP ${err.describe()})` },
        ]);
      }
      throw err;
    });
  }
  const problem = localFileProblem(tool, field)!;
  throw new PreflightError(problem, [{ field: field.name, reason: problem }]);
}

/**
 * The body of one job's create: its parameters plus its local inputs (and local paths in other
 * media fields) encoded as each field takes them (uploaded for URL-only fields), validated like the server would. `sending` sees
 * the input's bytes as read (once) for the request.
 */
export async function buildParams(
  tool: ToolEntry,
  params: Record<string, unknown>,
  inputPath: string | null,
  upload: UploadInput,
  sending?: (bytes: Buffer) => void,
): Promise<Record<string, unknown>> {
  const out = { ...params };
  for (const f of localMediaFields(tool, out)) {
    const v = out[f.name];
    out[f.name] =
      f.kind === 'media'
        ? await encodeLocal(tool, f, v as string, upload)
        : await Promise.all((v as unknown[]).map((x) => (isLocalPath(x) ? encodeLocal(tool, f, x, upload) : x)));
  }
  const field = batchFieldOf(tool);
  if (inputPath && field) {
    const value = await encodeLocal(tool, field, inputPath, upload, inputCheckOf(tool) ?? undefined, sending);
    out[field.name] = field.kind === 'mediaList' ? [value] : value;
  }
  const v = validateRequest(tool, out);
  if (!v.ok)
    throw new PreflightError(
      `the request is not valid: ${v.invalid.map((p) => `${p.field} ${p.reason}`).join('; ')}`,
      v.invalid,
    );
  return out;
}
