import { getTool } from '../../../shared/catalogue/index.ts';
import type { CapHold } from '../../../shared/contract/jobs.ts';
import type { JobStore } from '../queue/store.ts';
import { heldFor } from './held-at.ts';
import type { Pacer } from './pacer.ts';

/**
 * A capped tool's name as a person reads it: the catalogue's title, or a workflow app's title as the Apps
 * screen shows it (`appTitles`, by app id), else the app said as one with the start of its id.
 */
export function limitTitle(tool: string, appTitles: ReadonlyMap<string, string> = new Map()): string {
  if (tool === '*') return 'every other tool';
  if (tool.startsWith('app:')) return appTitles.get(tool.slice(4)) ?? `Workflow app ${tool.slice(4, 12)}`;
  try {
    return getTool(tool).title;
  } catch {
    return tool;
  }
}

/** Tools with queued jobs whose daily cap is spent for the scope in use; none before the scope is known. */
export function heldTools(pacer: Pacer, store: JobStore, backend: string | null): CapHold[] {
  return heldFor(pacer, pacer.lastScope, store, backend, limitTitle);
}
