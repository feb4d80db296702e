import type { RunningSandbox } from './index.ts';

/**
 * The app's built-in Sandbox, on a free port, its tasks journaled at `taskJournal`: every host's
 * backend when no key is set. Loaded when it first starts, as the official description it serves
 * from is heavy to load and a host given a key never needs it.
 */
export const startBuiltInSandbox = (taskJournal: string): Promise<RunningSandbox> =>
  import('./index.ts').then((m) => m.startSandbox({ port: 0, taskJournal }));
