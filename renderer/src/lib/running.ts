import type { AuditStatus, EventPayload } from '../../../shared/contract/index.ts';
import { call, on } from './bridge.ts';

/** Each task of the app's that a window may not have started, with the event that tells its end. */
const DONE = { import: 'audit.importDone', sync: 'audit.syncDone' } as const;
type Task = keyof typeof DONE;

/**
 * Picks up the app's import or sync in a window that did not start it (one reloaded since it
 * started, another tab): `running` gets audit.status's snapshot if one runs now, `done` every end
 * of one (this window's own too: each caller tells them apart). The end is listened for before the
 * status is asked, and a task that ended in between is not taken for running, so a window never
 * waits for an end it missed. Returns the unsubscribe.
 */
export function adoptRunning<T extends Task>(task: T, h: {
  running: (r: NonNullable<AuditStatus['running'][T]>) => void;
  done: (d: EventPayload<(typeof DONE)[T]>) => void;
}): () => void {
  let ends = 0;
  let live = true;
  const off = on(DONE[task], (d) => {
    ends++;
    h.done(d as EventPayload<(typeof DONE)[T]>);
  });
  const asked = ends;
  call('audit.status', {})
    .then((s) => {
      const r = s.running[task];
      if (live && r && ends === asked) h.running(r as NonNullable<AuditStatus['running'][T]>);
    })
    // The status line says why the status cannot be read; nothing runs that this window knows of.
    .catch(() => {});
  return () => {
    live = false;
    off();
  };
}
