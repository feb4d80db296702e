import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { LimitsStatus, limitsCommands } from '../../../shared/contract/limits.ts';
import { dailyCapOf, nextUtcMidnight } from '../../../shared/service-limits.ts';
import type { JobStore } from '../queue/store.ts';
import { limitTitle } from './held.ts';
import type { Pacer } from './pacer.ts';

/** Workflow apps' titles by app id (AppsService.titlesOf); an app it cannot name is left out. */
export type AppTitles = (appIds: string[]) => Promise<ReadonlyMap<string, string>>;

/** The daily limits' commands over the engine's pacer: the plan, its caps table, today's use. */
export function limitsHandlers(
  pacer: Pacer,
  store: JobStore,
  appTitles: AppTitles = async () => new Map(),
): HandlerMap<typeof limitsCommands> {
  const status = async (): Promise<LimitsStatus> => {
    const at = await pacer.scope();
    const { limiter } = pacer;
    const caps = limiter.capsOf(at.plan);
    const own = limiter.ownCapsOf(at.plan);
    const used = limiter.usedToday(at.scope);
    const waiting = store.queuedByTool(null);
    const resetsAt = nextUtcMidnight(limiter.now());
    const apps = [...Object.keys(caps), ...used.keys()].filter((t) => t.startsWith('app:')).map((t) => t.slice(4));
    const titles = apps.length ? await appTitles([...new Set(apps)]) : new Map<string, string>();
    const title = (tool: string) => limitTitle(tool, titles);
    const today = [...new Set([...used.keys(), ...waiting.keys()])].sort().map((tool) => {
      const cap = dailyCapOf(caps, tool);
      const n = used.get(tool) ?? 0;
      const finite = Number.isFinite(cap);
      return {
        tool,
        title: title(tool),
        cap: finite ? cap : null,
        used: n,
        left: finite ? Math.max(0, cap - n) : null,
        resetsAt,
        waiting: waiting.get(tool) ?? 0,
      };
    });
    return {
      plan: at.plan,
      planFrom: at.planFrom,
      caps: Object.entries(caps).map(([tool, cap]) => ({ tool, title: title(tool), cap, own: tool in own })),
      today,
    };
  };
  return {
    'limits.status': status,
    'limits.setCap': async ({ tool, cap, plan }) => {
      pacer.limiter.setCap(plan ?? (await pacer.scope()).plan, tool, cap);
      return status();
    },
  };
}
