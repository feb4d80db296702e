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
 * Picks up the app's import or sync in a window that did not start it: one reloaded since it
 * started, or another tab, open before it started or after. `busy` says whether the window shows
 * one now (its own, or one it follows). While it does, the task's progress and stop go to
 * `progress` and `stopping`; while it does not, the first of them (or audit.status's snapshot, asked
 * once here) goes to `follow`. `done` gets every end of one (this window's own too: each caller
 * tells them apart). The end is listened for before the status is asked, and a task that ended in
 * between is not taken for running, so a window never waits for an end it missed. An event of the
 * window's own task never comes after its answer (the events and the answers share one ordered
 * channel, and the core tells the end before it answers), so none is taken for another's.
 * Returns the unsubscribe.
 */
export function adoptRunning<T extends Task>(
  task: T,
  h: {
    busy: () => boolean;
    follow: (r: Running<Progress<T>>) => void;
    progress: (p: Progress<T>) => void;
    stopping: () => void;
    done: (d: EventPayload<(typeof EVENTS)[T]['done']>) => void;
  },
): () => void {
  const ev = EVENTS[task];
  let ends = 0;
  let live = true;
  const offs = [
    on(ev.done, (d) => {
      ends++;
      h.done(d as EventPayload<(typeof EVENTS)[T]['done']>);
    }),
    on(ev.progress, (p) => {
      if (h.busy()) h.progress(p as Progress<T>);
      else h.follow({ progress: p as Progress<T>, stopping: false });
    }),
    on(ev.stopping, () => {
      if (h.busy()) h.stopping();
      else h.follow({ progress: null, stopping: true });
    }),
  ];
  const asked = ends;
  call('audit.status', {})
    .then((s) => {
      const r = s.running[task];
      if (live && r && ends === asked && !h.busy()) h.follow(r as Running<Progress<T>>);
    })
    // The status line says why the status cannot be read; nothing runs that this window knows of.
    .catch(() => {});
  return () => {
    live = false;
    for (const off of offs) off();
  };
}
