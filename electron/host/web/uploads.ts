import { createWriteStream, type WriteStream } from 'node:fs';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fsWriteWords } from '../../core/batch/fs-error.ts';
import { DropNames } from './drop-names.ts';
import type { WebAccess } from './access.ts';

type UploadRequest = FastifyRequest<{ Querystring: { token?: string; drop?: string; rel?: string } }>;

const WRITE_ERROR_STATUS: Record<string, number> = { ENOTDIR: 409, EISDIR: 409, ENAMETOOLONG: 400 };

/** Why a dropped file could not be written: 409 when the drop's own files are in its way, 400 for a path too long for the disk. */
function uploadError(e: unknown): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EEXIST')
    return Object.assign(new Error('a file of this path was already copied in this drop'), { statusCode: 409 });
  const status = WRITE_ERROR_STATUS[code ?? ''] ?? 500;
  return Object.assign(new Error(fsWriteWords(e)), { statusCode: status });
}

/** The first of `base`/parts[0], `base`/parts[0]/parts[1]... that exists as a link, or null; none past the first that does not exist. */
async function linkOnPath(base: string, parts: readonly string[]): Promise<string | null> {
  let path = base;
  for (const part of parts) {
    path = join(path, part);
    try {
      if ((await lstat(path)).isSymbolicLink()) return path;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
        return null;
      throw e;
    }
  }
  return null;
}

/**
 * `PUT /upload`: dropped files stream into <home>/inbox/<drop>/<relative path>, names made portable
 * (DropNames). A context without Fastify's parsers: the JSON and text parsers read the body first,
 * so a .json or .txt file arrived empty.
 */
export async function serveUploads(app: FastifyInstance, home: string, access: WebAccess): Promise<void> {
  const inbox = join(home, 'inbox');
  const dropNames = new DropNames(inbox);
  await app.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', (_req, _payload, done) => done(null));
    uploads.put('/upload', async (req: UploadRequest, reply) => {
      if (!access.holdsToken(req.query.token)) return reply.code(401).send({ message: 'missing or wrong token' });
      return upload(req, reply, inbox, dropNames);
    });
  });
}

async function upload(req: UploadRequest, reply: FastifyReply, inbox: string, dropNames: DropNames) {
  const drop = String(req.query.drop ?? '');
  const rel = String(req.query.rel ?? '');
  if (!/^[A-Za-z0-9_-]{6,64}$/.test(drop))
    return reply.code(400).send({ message: 'drop must be 6 to 64 letters, digits, _ or -' });
  const parts = rel.split(/[\\/]+/).filter(Boolean);
  // The renderer names the file beside each message, so the messages do not repeat its path.
  if (!parts.length || parts.some((p) => p === '..' || p === '.' || p.includes('\0'))) {
    return reply
      .code(400)
      .send({ message: 'not a relative file path inside the drop (a "." or ".." part, or no name)' });
  }
  const taken = dropNames.take(drop, parts);
  if ('status' in taken) return reply.code(taken.status).send({ message: taken.message });
  const dir = join(inbox, drop);
  const dest = join(dir, ...taken.parts);
  let out: WriteStream | undefined;
  let created = false;
  // Every folder of a drop is made here, never a link: one found on the way (put there by
  // another program) would have the file, or the folders made for it, land outside the inbox.
  let link: string | null;
  try {
    link = await linkOnPath(inbox, [drop, ...taken.parts]);
  } catch (e) {
    taken.settle(false);
    throw uploadError(e);
  }
  if (link !== null) {
    taken.settle(false);
    return reply.code(403).send({
      message: `${link} is a link, and a dropped file is written only inside its drop's own folders: not written`,
    });
  }
  try {
    await mkdir(dirname(dest), { recursive: true }).catch((e: NodeJS.ErrnoException) => {
      // A file where a folder of its path goes: not this path's file, which EEXIST says below.
      throw e.code === 'EEXIST' ? Object.assign(e, { code: 'ENOTDIR' }) : e;
    });
    out = createWriteStream(dest, { flags: 'wx' });
    out.once('open', () => (created = true));
    await pipeline(req.raw, out);
  } catch (e) {
    // A part of a file is no file: the batch takes the drop's whole folder, so it would run it.
    // A destroyed stream may still be opening (and then create the file): wait for it to close.
    // EEXIST never opened: that file is another upload's, and stays.
    const opening = out;
    if (opening && !opening.closed) await new Promise<void>((done) => opening.once('close', () => done()));
    if (created) await rm(dest, { force: true });
    taken.settle(false);
    throw uploadError(e);
  }
  taken.settle(true);
  return { path: dest, folder: dir };
}
