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
        const id = s(u.user_id ?? u.id ?? u.user_email ?? u.email, 'unknown');
        const email = u.user_email ?? u.email;
        const e = (p.byUser[id] ??= {
          uses: 0,
          credits: 0,
          email: typeof email === 'string' ? email : null,
          ...(typeof u.group_name === 'string' ? { group: u.group_name } : {}),
        });
        e.uses += n(u.uses ?? u.user_uses);
        e.credits += n(u.credits ?? u.user_credits);
      }
    }
    return p;
  });
}

/**
 * The team directory as the description shapes it: members `{email, role, status}` (no id or name:
 * a member is known by e-mail), keys `{api_key_id, display_name, status}` with string ids, groups
 * `{group_id, name, member_count}`, projects `{project_reference, name}`; the short names beside.
 */
export function parseDirectory(members: unknown, keys: unknown, groups: unknown, projects: unknown): Directory {
  return {
    members: arr(members)
      .map(obj)
      .map((m) => ({
        id: m.id === undefined || m.id === null ? null : n(m.id),
        name: s(m.name) || s(m.email),
        email: s(m.email),
        role: s(m.role),
        status: s(m.status),
        groupIds: (Array.isArray(m.group_ids) ? m.group_ids : listOf(m.group_id)).map(n),
      })),
    apiKeys: arr(keys)
      .map(obj)
      .map((k) => ({ id: s(k.api_key_id ?? k.id), name: s(k.display_name ?? k.name), status: s(k.status) })),
    groups: arr(groups)
      .map(obj)
      .map((g) => ({ id: n(g.group_id ?? g.id), name: s(g.name), memberCount: n(g.member_count ?? g.members_count) })),
    projects: arr(projects)
      .map(obj)
      .map((p) => ({ reference: s(p.project_reference ?? p.reference ?? p.id), name: s(p.name) })),
  };
}
