import type { Directory, UsagePoint } from '../../../shared/contract/team.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const listOf = (v: unknown): unknown[] => (v === undefined ? [] : [v]);
function arr(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  return Array.isArray(obj(v).data) ? (obj(v).data as unknown[]) : [];
}
const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : Number(v) || 0);
function s(v: unknown, d = ''): string {
  if (typeof v === 'string') return v;
  return typeof v === 'number' ? String(v) : d;
}

/**
 * `{data: [{date, consumptions: [{tool, user_uses, user_credits, user_usages: [...]}]}]}`
 * (api-notes) into one point per bucket with totals per tool and per user.
 */
export function parseUsage(body: unknown): UsagePoint[] {
  return arr(body).map((raw) => {
    const d = obj(raw);
    const p: UsagePoint = { date: s(d.date), uses: 0, credits: 0, byTool: {}, byUser: {} };
    for (const c of arr(d.consumptions).map(obj)) {
      const tool = s(c.tool, 'unknown');
      const uses = n(c.user_uses ?? c.uses);
      const credits = n(c.user_credits ?? c.credits);
      p.uses += uses;
      p.credits += credits;
      const t = (p.byTool[tool] ??= { uses: 0, credits: 0 });
      t.uses += uses;
      t.credits += credits;
      for (const u of arr(c.user_usages).map(obj)) {
        const id = s(u.user_id ?? u.id ?? u.email, 'unknown');
        const e = (p.byUser[id] ??= { uses: 0, credits: 0, email: typeof u.email === 'string' ? u.email : null });
        e.uses += n(u.uses ?? u.user_uses);
        e.credits += n(u.credits ?? u.user_credits);
      }
    }
    return p;
  });
}

export function parseDirectory(members: unknown, keys: unknown, groups: unknown, projects: unknown): Directory {
  return {
    members: arr(members)
      .map(obj)
      .map((m) => ({
        id: n(m.id),
        name: s(m.name),
        email: s(m.email),
        role: s(m.role),
        status: s(m.status),
        groupIds: (Array.isArray(m.group_ids) ? m.group_ids : listOf(m.group_id)).map(n),
      })),
    // The documented names (api_key_id, display_name, group_id, project_reference) beside the short ones.
    apiKeys: arr(keys)
      .map(obj)
      .map((k) => ({ id: n(k.id ?? k.api_key_id), name: s(k.name ?? k.display_name), status: s(k.status) })),
    groups: arr(groups)
      .map(obj)
      .map((g) => ({ id: n(g.id ?? g.group_id), name: s(g.name), memberCount: n(g.member_count ?? g.members_count) })),
    projects: arr(projects)
      .map(obj)
      .map((p) => ({ reference: s(p.reference ?? p.project_reference ?? p.id), name: s(p.name) })),
  };
}
