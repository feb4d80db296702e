import type { CapHold } from '../../../shared/contract/jobs.ts';
import type { JobStore } from '../queue/store.ts';
import type { PaceLimiter } from './limiter.ts';
import type { PaceScope } from './pacer.ts';

// Without the catalogue (and so zod): the CLI's `jobs list` asks for titles only when a tool is held.

/** The queue flag holding the scope a process last paced by (Pacer's `remember`), for readers without the key. */
export const PACE_SCOPE_FLAG = 'pace_scope';

/** Tools with queued jobs whose daily cap is spent for scope `at`, each titled by `titleOf`; none without a scope. */
export function heldFor(
  limiter: Pick<PaceLimiter, 'capStatus'>,
  at: PaceScope | null,
  store: JobStore,
  backend: string | null,
  titleOf: (tool: string) => string,
): CapHold[] {
  if (!at) return [];
  const held: CapHold[] = [];
  for (const [tool, waiting] of store.queuedByTool(backend)) {
    const cap = limiter.capStatus(at.scope, at.plan, tool);
    if (cap.left > 0) continue;
    held.push({ tool, title: titleOf(tool), limit: cap.cap, left: cap.left, resetsAt: cap.resetsAt, waiting });
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
