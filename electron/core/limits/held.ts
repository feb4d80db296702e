import { getTool } from '../../../shared/catalogue/index.ts';
import type { HeldBy } from '../../../shared/contract/jobs.ts';
import type { JobStore } from '../queue/store.ts';
import type { Pacer } from './pacer.ts';

/** A capped tool's name as a person reads it: the catalogue's title, or the workflow app's id said as such. */
export function limitTitle(tool: string): string {
  if (tool === '*') return 'every other tool';
  if (tool.startsWith('app:')) return `the workflow app ${tool.slice(4)}`;
  try {
    return getTool(tool).title;
  } catch {
    return tool;
  }
}

/** Tools with queued jobs whose daily cap is spent for the scope in use; none before the scope is known. */
export function heldTools(pacer: Pacer, store: JobStore, backend: string | null): HeldBy[] {
  const at = pacer.lastScope;
  if (!at) return [];
  const held: HeldBy[] = [];
  for (const [tool, waiting] of store.queuedByTool(backend)) {
    const cap = pacer.limiter.capStatus(at.scope, at.plan, tool);
    if (cap.left > 0) continue;
    held.push({ tool, title: limitTitle(tool), limit: cap.cap, left: cap.left, resetsAt: cap.resetsAt, waiting });
  }
  return held;
}
