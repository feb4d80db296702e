import type WebSocket from 'ws';

/** A contract command's reply over the web host's socket, as the page receives it. */
export type Reply = { ok: boolean; result?: unknown; error?: { code: string; message: string } };

/** Sends commands over an open socket, each answered by the reply that carries its id. */
export function askOver(ws: WebSocket): (cmd: string, payload: unknown) => Promise<Reply> {
  let seq = 0;
  return (cmd, payload) => {
    const id = ++seq;
    return new Promise((done) => {
      const on = (raw: Buffer) => {
        const m = JSON.parse(raw.toString()) as { id?: number };
        if (m.id !== id) return;
        ws.off('message', on);
        done(m as Reply);
      };
      ws.on('message', on);
      ws.send(JSON.stringify({ id, cmd, payload }));
    });
  };
}
