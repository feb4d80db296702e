import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import { createCore, HAND_OVER, type Core } from '../../core/index.ts';
import { dbPaths } from '../../core/paths.ts';
import { startBuiltInSandbox } from '../../sandbox/built-in.ts';
import { MAX_MESSAGE_BYTES } from '../../../shared/socket-limit.ts';
import { webAccess } from './access.ts';
import { addSecurityHeaders, refuseForeignHosts } from './guard.ts';
import { serveProbes } from './probes.ts';
import { serveSocket } from './socket.ts';
import { answerNotFound, serveFiles } from './files.ts';
import { serveUploads } from './uploads.ts';
import { serveRenderer } from './renderer.ts';
import { listenOnFirstFree } from './listen.ts';
import { WebHandOffs } from './hand-off.ts';

export { webCsp } from './guard.ts';
export { attachmentHeader } from './files.ts';

export interface WebHostOptions {
  home: string;
  /** Tried in order, one in use or forbidden passed over (0: any free port); the last one's failure is thrown. */
  ports?: readonly number[];
  /** The built renderer (electron-vite's out/renderer). */
  rendererDir?: string;
  env?: NodeJS.ProcessEnv;
  token?: string;
  /** Folders the person named when starting the host (--folder, MEDIADESK_WEB_FOLDERS): a page may name inputs inside them. */
  folders?: readonly string[];
  /** Files, folders and links given at start (--open), for the first page: its Studio, Queue or Audit shows them. */
  open?: readonly string[];
}

export interface RunningWebHost {
  /** The URL to open, token included. */
  url: string;
  origin: string;
  token: string;
  /** This launch's id, which /healthz answers: another launch on the data folder tells a running host by it. */
  launch: string;
  core: Core;
  close(): Promise<void>;
}

/**
 * The web host: the same core as the desktop app, its contract carried over a WebSocket. It binds
 * 127.0.0.1 only, and every request that reaches the core must carry the token (kept in the data
 * folder by main.ts, so a tab outlives a restart; a new one per launch when none is given).
 */
export async function startWebHost(options: WebHostOptions): Promise<RunningWebHost> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  const launch = randomBytes(9).toString('base64url');
  const rendererDir = resolve(options.rendererDir ?? 'out/renderer');
  const core = await createCore({
    home: options.home,
    host: 'web',
    env: options.env,
    startSandbox: () => startBuiltInSandbox(dbPaths(options.home).sandboxTasks),
  });
  core.log.addSecret(token);
  // A browser sends files, never paths: folders the person named at start are the paths a page may type.
  for (const folder of options.folders ?? []) core.pathPolicy?.grant(folder);
  // Files saved for a browser to download are the host's only until downloaded: none outlives a launch.
  const handOverDir = join(resolve(options.home), HAND_OVER);
  await rm(handOverDir, { recursive: true, force: true });

  // Closing ends every connection: one a tab was still using when close began stayed open for the
  // keep-alive timeout after its answer (72 s), and the host's process with it.
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 * 1024, forceCloseConnections: true });
  let origin = '';
  const access = webAccess(token, () => origin);
  addSecurityHeaders(app, () => origin);
  // A longer frame is refused by its header before it is read (closed with 1009): 16 MB frames read whole held memory.
  await app.register(fastifyWebsocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  refuseForeignHosts(app, access);
  serveProbes(app, token, launch);
  const handOffs = new WebHandOffs(core);
  if (options.open?.length) handOffs.give(options.open, process.cwd());
  handOffs.serve(app, access);
  serveSocket(app, core, access, handOffs);
  serveFiles(app, core, access, handOverDir);
  answerNotFound(app);
  await serveUploads(app, options.home, access);
  // sendFile (for /media, /download and index.html) comes from this plugin.
  await app.register(fastifyStatic, { root: resolve('.'), serve: false });
  await serveRenderer(app, rendererDir, access);

  try {
    origin = await listenOnFirstFree(app, options.ports ?? []);
  } catch (e) {
    await app.close();
    await core.close();
    throw e;
  }
  core.log.info(`web host listening on ${origin}`);
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    launch,
    core,
    async close() {
      await app.close();
      await core.close();
    },
  };
}
