import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { LimitsStatus, limitsCommands } from '../../../shared/contract/limits.ts';
import { PUBLISHED_CAPS_CHECKED, PUBLISHED_CAPS_SOURCE } from '../../../shared/published-caps.ts';
import type { JobStore } from '../queue/store.ts';
import { limitTitle } from './held.ts';
import type { Pacer } from './pacer.ts';

/** Workflow apps' titles by app id (AppsService.titlesOf); an app it cannot name is left out. */
export type AppTitles = (appIds: string[]) => Promise<ReadonlyMap<string, string>>;

type CapFrom = LimitsStatus['caps'][number]['from'];

/** The daily limits' commands over the engine's pacer: the plan, its caps and where each comes from, today's use. */
export function limitsHandlers(
  pacer: Pacer,
  store: JobStore,
  appTitles: AppTitles = async () => new Map(),
): HandlerMap<typeof limitsCommands> {
  const status = async (): Promise<LimitsStatus> => {
    const at = await pacer.scope();
    const { limiter } = pacer;
    const published = limiter.publishedCapsOf(at.plan);
    const own = limiter.ownCapsOf(at.plan);
    const learned = limiter.learnedCapsOf(at.scope);
    const used = pacer.usedToday(at.scope);
    const waiting = store.queuedByTool(null);
    const named = [...new Set([...Object.keys(published), ...Object.keys(own), ...learned.keys()])];
    const apps = [...named, ...used.keys()].filter((t) => t.startsWith('app:')).map((t) => t.slice(4));
    const titles = apps.length ? await appTitles([...new Set(apps)]) : new Map<string, string>();
    const title = (tool: string) => limitTitle(tool, titles);
    /** Where a tool's cap in force comes from, or null when it has none. */
    const fromOf = (tool: string, cap: number, resetsAt: number): CapFrom | null => {
      if (!Number.isFinite(cap)) return null;
      const l = learned.get(tool);
      if (l && l.cap === cap && l.until === resetsAt) return 'learned';
      return tool in own || (!(tool in published) && '*' in own) ? 'own' : 'published';
    };
    const caps = named.sort().map((tool) => {
      const c = pacer.capStatus(at.scope, at.plan, tool);
      const from = tool === '*' ? 'own' : (fromOf(tool, c.cap, c.resetsAt) ?? 'published');
      const cap = tool === '*' ? own['*'] : c.cap;
      return {
        tool,
        title: title(tool),
        cap,
        own: from === 'own',
        from,
        until: from === 'learned' ? c.resetsAt : null,
      };
    });
    const today = [...new Set([...used.keys(), ...waiting.keys()])].sort().map((tool) => {
      const c = pacer.capStatus(at.scope, at.plan, tool);
      const finite = Number.isFinite(c.cap);
      return {
        tool,
        title: title(tool),
        cap: finite ? c.cap : null,
        capFrom: fromOf(tool, c.cap, c.resetsAt),
        used: used.get(tool) ?? 0,
        left: finite ? c.left : null,
        resetsAt: c.resetsAt,
        waiting: waiting.get(tool) ?? 0,
      };
    });
    return {
      plan: at.plan,
      planFrom: at.planFrom,
      caps,
      published: { source: PUBLISHED_CAPS_SOURCE, checked: PUBLISHED_CAPS_CHECKED },
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
