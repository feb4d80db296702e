import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { validateRequest, type Encoding, type Field, type ToolEntry } from '../../../shared/catalogue/index.ts';
import type { InvalidParam } from '../api/client.ts';
import type { ToolClient } from '../api/tools.ts';

const MIME: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', mp4: 'video/mp4', mov: 'video/quicktime', mp3: 'audio/mpeg', wav: 'audio/wav' };
export const mimeOf = (path: string) => MIME[extname(path).slice(1).toLowerCase()] ?? 'application/octet-stream';

/** A request that cannot be sent; nothing was paid. */
export class PreflightError extends Error {
  override name = 'PreflightError';
  readonly invalid: InvalidParam[];
  constructor(message: string, invalid: InvalidParam[] = []) {
    super(message);
    this.invalid = invalid;
  }
}

/** The loopback Sandbox accepts uploads; the live service has no upload endpoint for these fields. */
export const isLoopback = (baseUrl: string) => /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/i.test(baseUrl);

/** How a local file travels in this field: the first of the field's encodings we can produce. */
export function localEncoding(field: Field & { encodings: readonly Encoding[] }, canUpload: boolean): Encoding | null {
  if (field.encodings.includes('base64')) return 'base64';
  if (field.encodings.includes('dataUri')) return 'dataUri';
  if (canUpload && (field.encodings.includes('url') || field.encodings.includes('upload'))) return 'url';
  return null;
}

/** A placeholder of the right encoding, to validate a batch's parameters before any file is read. */
export function placeholderFor(field: Field & { encodings: readonly Encoding[] }): string {
  if (field.encodings.includes('base64')) return 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB';
  if (field.encodings.includes('dataUri')) return 'data:image/png;base64,iVBORw0KGgo=';
  if (field.encodings.includes('url')) return 'https://example.com/input.png';
  return 'upl_vid_placeholder';
}

export const batchFieldOf = (tool: ToolEntry) => {
  const f = tool.fields.find((x) => x.name === tool.batchField);
  return f && (f.kind === 'media' || f.kind === 'mediaList') ? f : null;
};

/**
 * The body of one job's create: its parameters plus its local input encoded as its field takes
 * it (base64, data URI, or a Sandbox upload for URL-only fields), validated like the server would.
 */
export async function buildParams(tool: ToolEntry, params: Record<string, unknown>, inputPath: string | null, client: ToolClient, canUpload: boolean): Promise<Record<string, unknown>> {
  const out = { ...params };
  const field = batchFieldOf(tool);
  if (inputPath && field) {
    let bytes: Buffer;
    try {
      bytes = await readFile(inputPath);
    } catch (err) {
      throw new PreflightError(`the input ${inputPath} could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const enc = localEncoding(field, canUpload);
    let value: string;
    if (enc === 'base64') value = bytes.toString('base64');
    else if (enc === 'dataUri') value = `data:${mimeOf(inputPath)};base64,${bytes.toString('base64')}`;
    else if (enc === 'url') value = (await client.api.upload<{ id: string; url: string }>('/__sandbox/uploads', bytes, mimeOf(inputPath))).url;
    else throw new PreflightError(`${tool.title} takes ${field.name} only as an HTTPS URL; a local file cannot be sent to the live service`, [{ field: field.name, reason: 'must be an HTTPS URL' }]);
    out[field.name] = field.kind === 'mediaList' ? [value] : value;
  }
  const v = validateRequest(tool, out);
  if (!v.ok) throw new PreflightError(`the request is not valid: ${v.invalid.map((p) => `${p.field} ${p.reason}`).join('; ')}`, v.invalid);
  return out;
}
