import { getTool } from '../../../shared/catalogue/index.ts';
import type { CapHold } from '../../../shared/contract/jobs.ts';
import type { JobStore } from '../queue/store.ts';
import type { PaceLimiter } from './limiter.ts';
import type { Pacer, PaceScope } from './pacer.ts';

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

/** The queue flag holding the scope a process last paced by (Pacer's `remember`), for readers without the key. */
export const PACE_SCOPE_FLAG = 'pace_scope';

/** Tools with queued jobs whose daily cap is spent for the scope in use; none before the scope is known. */
export function heldTools(pacer: Pacer, store: JobStore, backend: string | null): CapHold[] {
  return heldFor(pacer.limiter, pacer.lastScope, store, backend);
}

/** heldTools for a given limiter and scope: the CLI's `jobs list` reads them from the store alone. */
export function heldFor(
  limiter: PaceLimiter,
  at: PaceScope | null,
  store: JobStore,
  backend: string | null,
): CapHold[] {
  if (!at) return [];
  const held: CapHold[] = [];
  for (const [tool, waiting] of store.queuedByTool(backend)) {
    const cap = limiter.capStatus(at.scope, at.plan, tool);
    if (cap.left > 0) continue;
    held.push({ tool, title: limitTitle(tool), limit: cap.cap, left: cap.left, resetsAt: cap.resetsAt, waiting });
  }
  return held;
}

/** The scope some process last paced by (PACE_SCOPE_FLAG), or null if none did or it does not read. */
export function rememberedScope(store: JobStore): PaceScope | null {
  const raw = store.flag(PACE_SCOPE_FLAG);
  if (!raw) return null;
  try {
    const at = JSON.parse(raw) as PaceScope;
    return typeof at?.scope === 'string' && typeof at.plan === 'string' ? at : null;
  } catch {
    return null;
  }
}
