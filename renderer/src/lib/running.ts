import type { EventPayload, Running } from '../../../shared/contract/index.ts';
import { call, on } from './bridge.ts';

/** Each task of the app's that a window may not have started, with the events that tell how it goes. */
const EVENTS = {
  import: { progress: 'audit.importProgress', stopping: 'audit.importStopping', done: 'audit.importDone' },
  sync: { progress: 'audit.syncProgress', stopping: 'audit.syncStopping', done: 'audit.syncDone' },
} as const;
type Task = keyof typeof EVENTS;
type Progress<T extends Task> = EventPayload<(typeof EVENTS)[T]['progress']>;

/**
 * Follows the app's import or sync in a window that did not start it (reloaded, or another tab). The
 * end is listened for before the status is asked, and the core tells an end before it answers, so a
 * window never waits for an end it missed nor takes its own for another's. Returns the unsubscribe.
 */
export function adoptRunning<T extends Task>(
  task: T,
  handlers: {
    /** Whether the window shows a task now (its own, or one it follows). */
    busy: () => boolean;
    /** While it shows none: the first progress, or audit.status's snapshot. */
    follow: (r: Running<Progress<T>>) => void;
    progress: (p: Progress<T>) => void;
    stopping: () => void;
    /** Every end of a task, the window's own too. */
    done: (d: EventPayload<(typeof EVENTS)[T]['done']>) => void;
  },
): () => void {
  const events = EVENTS[task];
  let ends = 0;
  let live = true;
  const offs = [
    on(events.done, (d) => {
      ends++;
      handlers.done(d as EventPayload<(typeof EVENTS)[T]['done']>);
    }),
    on(events.progress, (p) => {
      if (handlers.busy()) handlers.progress(p as Progress<T>);
      else handlers.follow({ progress: p as Progress<T>, stopping: false });
    }),
    on(events.stopping, () => {
      if (handlers.busy()) handlers.stopping();
      else handlers.follow({ progress: null, stopping: true });
    }),
  ];
  const asked = ends;
  call('audit.status', {})
    .then((s) => {
      const r = s.running[task];
      if (live && r && ends === asked && !handlers.busy()) handlers.follow(r as Running<Progress<T>>);
    })
    // The status line says why the status cannot be read; nothing runs that this window knows of.
    .catch(() => {});
  return () => {
    live = false;
    for (const off of offs) off();
  };
}
