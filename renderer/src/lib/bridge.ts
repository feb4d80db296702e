import type {
  CommandName,
  DeskApi,
  DeskErrorData,
  EventName,
  EventPayload,
  Req,
  Res,
  UploadFailure,
} from '../../../shared/contract/index.ts';
import { DeskError } from '../../../shared/contract/errors.ts';
import { mapLimit } from '../../../shared/concurrency.ts';
import { NothingCopied } from './upload.ts';
import { HOST_APP, HOST_PROOF_PATH, hostProof, newNonce } from '../../../shared/host-proof.ts';
import { MAX_MESSAGE_BYTES, overLimit } from '../../../shared/socket-limit.ts';

declare global {
  interface Window {
    desk?: DeskApi;
  }
}

type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * Why the host is not reached, beyond "gone" (it stopped or restarts): `replaced`, a MediaDesk host
 * with another token (started with --new-token), so waiting will never bring the connection back;
 * `stranger`, another program now answers at this address and could not prove it holds the token.
 */
export type HostLost = 'replaced' | 'stranger' | null;

/** Whether the host answers: always under Electron; the web host's socket can drop. */
const connectionListeners = new Set<(up: boolean, lost: HostLost) => void>();
let hostUp = true;
let hostLost: HostLost = null;
function setHostUp(up: boolean, lost: HostLost = null): void {
  if (up === hostUp && lost === hostLost) return;
  hostUp = up;
  hostLost = lost;
  for (const l of connectionListeners) l(up, lost);
}

/** Calls `listener` whenever the host stops or starts answering; returns the unsubscribe. */
export function onConnection(listener: (up: boolean, lost: HostLost) => void): () => void {
  connectionListeners.add(listener);
  listener(hostUp, hostLost);
  return () => connectionListeners.delete(listener);
}

/**
 * Who answers at this address, asked without the token (shared/host-proof.ts): `ok` only for a
 * program that proves it holds this tab's token; the token is sent nowhere before that.
 */
async function whoAnswers(token: string): Promise<'ok' | 'gone' | 'replaced' | 'stranger'> {
  const nonce = newNonce();
  let body: { app?: unknown; proof?: unknown } | null;
  try {
    const r = await fetch(`${HOST_PROOF_PATH}?nonce=${nonce}`, { cache: 'no-store', credentials: 'omit' });
    body = r.ok ? ((await r.json().catch(() => null)) as typeof body) : null;
  } catch {
    return 'gone';
  }
  if (body && typeof body.proof === 'string' && body.proof === (await hostProof(token, nonce))) return 'ok';
  return body?.app === HOST_APP ? 'replaced' : 'stranger';
}

/** Calls `listener` each time the host answers again after a drop: what was shown may be stale (events were missed). */
const resumeListeners = new Set<() => void>();
export function onResume(listener: () => void): () => void {
  resumeListeners.add(listener);
  return () => resumeListeners.delete(listener);
}

/** Why a command cannot be sent, by who answers at the tab's address. */
const NOT_REACHED = {
  gone: 'cannot reach the MediaDesk host',
  replaced: 'the MediaDesk host was started with a new access link',
  stranger: 'another program answers at this address, not the MediaDesk host',
} as const;

/** Waits between attempts to reach a host that went away: quick at first, then at most every five seconds. */
const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 5000];

/**
 * The same contract over the web host's WebSocket, for the browser. The token comes from the
 * launch URL once and is kept for this tab only (sessionStorage), then removed from the address bar.
 */
// eslint-disable-next-line max-lines-per-function -- one socket's pending calls, listeners and reconnects share state; DeskApi's methods are a few lines each
function webSocketDesk(): DeskApi {
  const params = new URLSearchParams(location.search);
  const fromUrl = params.get('token');
  if (fromUrl) {
    sessionStorage.setItem('desk-token', fromUrl);
    // Keep the hash: it names the screen to open (#settings, #queue).
    history.replaceState(null, '', location.pathname + location.hash);
  }
  const token = fromUrl ?? sessionStorage.getItem('desk-token') ?? '';
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const pending = new Map<number, Pending>();
  let nextId = 1;
  // Unset until whoever answers has proved it is the host.
  let socket: WebSocket | undefined;
  let ready: Promise<void>;

  let attempts = 0;
  let dropped = false;
  const again = () => setTimeout(retry, RETRY_DELAYS_MS[Math.min(attempts++, RETRY_DELAYS_MS.length - 1)]);
  const connect = () => {
    const ws = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(token)}`);
    socket = ws;
    ready = new Promise((resolve, reject) => {
      ws.addEventListener(
        'open',
        () => {
          attempts = 0;
          setHostUp(true);
          if (dropped) for (const l of resumeListeners) l();
          dropped = false;
          resolve();
        },
        { once: true },
      );
      ws.addEventListener('error', () => reject(new DeskError('unavailable', 'cannot reach the MediaDesk host')), {
        once: true,
      });
    });
    // Nobody may be waiting on it (a drop between commands): an unheard rejection must not reach the console.
    ready.catch(() => {});
    ws.addEventListener('message', (m) => {
      const msg = JSON.parse(String(m.data)) as {
        id?: number;
        ok?: boolean;
        result?: unknown;
        error?: DeskErrorData;
        event?: string;
        payload?: unknown;
      };
      if (msg.event) {
        for (const l of listeners.get(msg.event) ?? []) l(msg.payload);
        return;
      }
      const p = msg.id !== undefined ? pending.get(msg.id) : undefined;
      if (!p) return;
      pending.delete(msg.id!);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(DeskError.from(msg.error ?? { code: 'internal', message: 'failed' }));
    });
    ws.addEventListener('close', (e) => {
      dropped = true;
      setHostUp(false);
      // 1009: the host refused a message by its size (one this page did not stop: a host of another version).
      const why =
        e.code === 1009
          ? `the MediaDesk host closed the connection: a message was larger than it takes (${megabytes(MAX_MESSAGE_BYTES)}); it reconnects by itself`
          : 'the connection to the MediaDesk host closed';
      for (const p of pending.values()) p.reject(new DeskError('unavailable', why));
      pending.clear();
      again();
    });
  };
  // The host restarting is normal: it keeps its token, so the tab reconnects by itself. Whoever
  // answers at this address proves first that it holds the token (whoAnswers): a MediaDesk host
  // with a new token is said once, another program that took the port is never sent the token.
  const retry = async () => {
    const who = await whoAnswers(token);
    if (who === 'ok') return connect();
    setHostUp(false, who === 'gone' ? null : who);
    // A command sent meanwhile is refused with why, as after a failed socket.
    ready = Promise.reject(new DeskError('unavailable', NOT_REACHED[who]));
    ready.catch(() => {});
    // A new token never comes back; a stranger may leave and the host return, asked again without the token.
    if (who !== 'replaced') again();
  };
  // Until the first check answers, commands wait for it as they wait for the socket.
  let opened: () => void = () => {};
  ready = new Promise((resolve) => (opened = resolve));
  void whoAnswers(token).then((who) => {
    if (who !== 'ok') {
      setHostUp(false, who === 'gone' ? null : who);
      if (who !== 'replaced') again();
      // Nothing is connected: commands are told so rather than left waiting.
      return opened();
    }
    connect();
    void ready.then(opened, opened);
  });
  // While the host is gone, background refreshes fail by the dozen; the banner (onConnection) is
  // how the user learns it, so those failures are not reported again one by one.
  addEventListener('unhandledrejection', (e) => {
    if (e.reason instanceof DeskError && e.reason.code === 'unavailable') e.preventDefault();
  });

  const downloadUrl = (path: string) => `/download?token=${encodeURIComponent(token)}&path=${encodeURIComponent(path)}`;
  return {
    host: 'web',
    async invoke(name, req) {
      await ready;
      // Closed, and not yet trying again (that waits for the check in `retry`): a message sent now
      // would be dropped by the socket without a word, and its caller left waiting for good.
      if (socket?.readyState !== WebSocket.OPEN)
        throw new DeskError(
          'unavailable',
          'the MediaDesk host is not answering (it stopped or is restarting); try again once it is back',
        );
      const id = nextId++;
      const text = JSON.stringify({ id, cmd: name, payload: req });
      // Said here rather than sent: the host closes the socket on a message over its limit.
      const bytes = overLimit(text);
      if (bytes !== null)
        throw new DeskError(
          'invalid',
          `${name}: the request is ${megabytes(bytes)} as sent, more than the ${megabytes(MAX_MESSAGE_BYTES)} the MediaDesk host takes in one message`,
        );
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        socket!.send(text);
      });
    },
    on(name, listener) {
      const set = listeners.get(name) ?? new Set();
      set.add(listener as (p: unknown) => void);
      listeners.set(name, set);
      return () => set.delete(listener as (p: unknown) => void);
    },
    pathForFile: () => null,
    mediaUrl: (path) => `/media?token=${encodeURIComponent(token)}&path=${encodeURIComponent(path)}`,
    startDrag: null,
    downloadUrl,
    async download(path) {
      const url = downloadUrl(path);
      // Asked first: a refused link would only show as a failed download in the browser's own list.
      const res = await fetch(url, { method: 'HEAD', cache: 'no-store' }).catch(() => null);
      if (!res)
        throw new DeskError('unavailable', 'the MediaDesk host is not answering, so the file was not downloaded');
      if (!res.ok) throw new DeskError('forbidden', DOWNLOAD_REFUSALS[res.status] ?? `the host answered ${res.status}`);
      const link = Object.assign(document.createElement('a'), { href: url, download: '' });
      document.body.append(link);
      link.click();
      link.remove();
    },
    async upload(files, onProgress) {
      const drop = crypto.randomUUID().replace(/-/g, '');
      const total = files.length;
      let folder = '';
      const paths: (string | null)[] = files.map(() => null);
      let copied = 0;
      let failed = 0;
      onProgress?.({ copied, failed, total });
      const outcomes = await mapLimit(
        files,
        UPLOAD_CONCURRENCY,
        async ({ file, relPath }, i): Promise<UploadFailure | null> => {
          try {
            ({ folder, path: paths[i] } = await uploadOne(token, drop, file, relPath));
            copied++;
            return null;
          } catch (err) {
            failed++;
            return { relPath, message: errorText(err) };
          } finally {
            onProgress?.({ copied, failed, total });
          }
        },
      );
      const failures = outcomes.filter((o) => o !== null);
      if (!copied) throw new NothingCopied(failures);
      return { folder, paths, failed: failures };
    },
  };
}

const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

/** Why the host refused a download, by its status (the body of an answer to HEAD is empty). */
const DOWNLOAD_REFUSALS: Record<number, string> = {
  401: 'the host no longer accepts this tab: open the URL it printed, then try again',
  403: 'the host sends only files MediaDesk saved since it started: save it again, then download',
  404: 'the file is no longer on the host (moved or deleted since it was saved): save it again',
};

// Chromium opens at most six connections to a host: four leave room for the page's own requests
// (thumbnails, media) while a drop is copied, and keep the link busy, which one at a time did not.
const UPLOAD_CONCURRENCY = 4;

/** Copies one file into the drop's folder and says where it is; a failure says what happened to this file. */
async function uploadOne(
  token: string,
  drop: string,
  file: File,
  relPath: string,
): Promise<{ folder: string; path: string }> {
  let res: Response;
  try {
    res = await fetch(`/upload?token=${encodeURIComponent(token)}&drop=${drop}&rel=${encodeURIComponent(relPath)}`, {
      method: 'PUT',
      body: file,
    });
  } catch {
    // fetch says only "Failed to fetch": reading the file ourselves tells its fault from the host's.
    // Its stream, not a slice: a slice of a file gone from disk reads as empty, without an error.
    const reader = file.stream().getReader();
    const readable = await reader.read().then(
      () => true,
      () => false,
    );
    void reader.cancel().catch(() => {});
    throw new Error(
      readable
        ? 'the connection to the MediaDesk host failed while copying it'
        : 'the browser could not read it (it may have been moved, changed or deleted since it was dropped)',
    );
  }
  const body = (await res.json().catch(() => ({}))) as { folder?: string; path?: string; message?: string };
  if (!res.ok || !body.folder || !body.path)
    throw new Error(body.message ?? `the host answered ${res.status} ${res.statusText}`.trim());
  return { folder: body.folder, path: body.path };
}

function electronDesk(api: DeskApi): DeskApi {
  return {
    host: 'electron',
    async invoke(name, req) {
      try {
        return await api.invoke(name, req);
      } catch (err) {
        const data = (err as { desk?: DeskErrorData }).desk;
        throw data ? DeskError.from(data) : err;
      }
    },
    on: (name, l) => api.on(name, l),
    pathForFile: (f) => api.pathForFile(f),
    mediaUrl: (path) => api.mediaUrl(path),
    upload: null,
    download: null,
    startDrag: (path) => api.startDrag?.(path),
    downloadUrl: null,
  };
}

export const desk: DeskApi = window.desk ? electronDesk(window.desk) : webSocketDesk();

export function call<K extends CommandName>(name: K, req: Req<K>): Promise<Res<K>> {
  return desk.invoke(name, req);
}

export function on<K extends EventName>(name: K, listener: (p: EventPayload<K>) => void): () => void {
  return desk.on(name, listener);
}

export function errorText(err: unknown): string {
  if (err instanceof DeskError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}
