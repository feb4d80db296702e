import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findOperation, OPERATIONS } from '../../shared/official/index.ts';
import { secondsToUtcMidnight } from './audit-route.ts';
import { sendError, sendInvalid, type InvalidParam } from './errors.ts';
import { creditsOf, DEMO_KEY_PLANS } from '../../shared/service-limits.ts';
import { callerOf, type Caller } from './keys.ts';
import { buildToolRoutes } from './tool-routes.ts';
import { intBetween, pick, rngFrom, seedOf } from './rng.ts';
import type { SandboxState } from './server.ts';
import type { Team } from './team.ts';

const DAY = 86_400_000;
export const CREDIT_USAGE_DEFAULT_DAYS = 7;
export const CREDIT_USAGE_MAX_DAYS = 365;
/** The reference: "Enterprise up to 365 days, Business up to 180 days". */
export const CREDIT_USAGE_MAX_DAYS_BUSINESS = 180;

/**
 * The display name the service reports a use under: a category, never the model ("Tool names are
 * returned as display names (e.g. "AI Image Models", "Asset Download")"), by what the create
 * generates (lip-sync and voiceover too). The video and audio names are the Sandbox's own: the
 * reference names only those two.
 */
export function usageCategoryOf(path: string): string {
  let name = categories.get(path);
  if (!name) {
    const made = findOperation('POST', `/v1/ai/${path}`)?.generates;
    name = { video: 'AI Video Models', audio: 'AI Audio Models' }[made as string] ?? 'AI Image Models';
    categories.set(path, name);
  }
  return name;
}
const categories = new Map<string, string>();
const GRANULARITIES = ['day', 'week', 'month', 'year'] as const;
type Granularity = (typeof GRANULARITIES)[number];
/** The tools seeded usage names: the reference's task endpoints, by their paths under /v1/ai/. */
const USAGE_TOOLS = OPERATIONS.filter((op) => op.generates).map((op) => op.path.slice('/v1/ai/'.length));
let pricePerUse: Map<string, number> | undefined;
/** Credits one use of a usage tool costs by the price table, at its defaults: the history a client learns prices from. */
function priceOf(tool: string): number {
  pricePerUse ??= new Map(
    [...buildToolRoutes().creates].map(([path, c]) => [
      path.slice('/v1/ai/'.length),
      creditsOf(c.tool?.id ?? path, {}),
    ]),
  );
  return pricePerUse.get(tool) ?? creditsOf('*', {});
}

/** One seeded usage record: who used which tool how often, under which project, group and key. */
interface Usage {
  day: string;
  userId: number;
  tool: string;
  uses: number;
  credits: number;
  project: string;
  groupId: number;
  apiKeyId: number;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The usage of one day for the seeded team: deterministic per (seed, day), computed on demand. */
function usageOfDay(team: Team, seed: number, day: string): Usage[] {
  const rng = rngFrom(seedOf(seed, 'usage', day));
  const out: Usage[] = [];
  const users = intBetween(rng, 3, 8);
  for (let i = 0; i < users; i++) {
    const m = pick(rng, team.members);
    for (let j = intBetween(rng, 1, 3); j > 0; j--) {
      const uses = intBetween(rng, 1, 40);
      const tool = pick(rng, USAGE_TOOLS);
      out.push({
        day,
        userId: m.id,
        tool,
        uses,
        credits: uses * priceOf(tool),
        project: pick(rng, team.projects).reference,
        groupId: m.groupId,
        apiKeyId: pick(rng, team.apiKeys).id,
      });
    }
  }
  return out;
}

/** Start day of the bucket a day falls in (weeks start on Monday, as ISO weeks do). */
function bucketOf(day: string, g: Granularity): string {
  if (g === 'day') return day;
  if (g === 'month') return `${day.slice(0, 7)}-01`;
  if (g === 'year') return `${day.slice(0, 4)}-01-01`;
  const ms = Date.parse(`${day}T00:00:00Z`);
  const dow = (new Date(ms).getUTCDay() + 6) % 7;
  return isoDay(ms - dow * DAY);
}

function intList(v: unknown, field: string, bad: InvalidParam[]): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) return (void bad.push({ field, reason: 'must be a list of integers' }), undefined);
  v.forEach((x, i) => {
    if (!Number.isInteger(x) || (x as number) < 1)
      bad.push({ field: `${field}.${i}`, reason: 'must be an integer of at least 1' });
  });
  return v as number[];
}

/** `api_key_ids`: the reference's are strings. */
function idList(v: unknown, field: string, bad: InvalidParam[]): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === ''))
    return (void bad.push({ field, reason: 'must be a list of strings' }), undefined);
  return v as string[];
}

function dateField(v: unknown, field: string, bad: InvalidParam[]): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v) || isoDay(Date.parse(`${v}T00:00:00Z`) || 0) !== v) {
    bad.push({ field, reason: 'must be a date in the format YYYY-MM-DD' });
    return undefined;
  }
  return Date.parse(`${v}T00:00:00Z`);
}

/** The directory a caller sees: the seeded team for team 1, a one-person team otherwise. */
function teamOf(caller: Caller, team: Team): Team {
  if (caller.teamId === 1) return team;
  return {
    members: [
      {
        id: caller.userId,
        name: caller.email.split('@')[0],
        email: caller.email,
        role: caller.role,
        status: 'active',
        groupId: 0,
      },
    ],
    groups: [],
    projects: [],
    folders: [],
    apiKeys: [
      {
        id: 9500 + caller.teamId,
        name: 'Default key',
        status: 'active',
        ownerId: caller.userId,
        createdAt: '2025-01-01T00:00:00.000Z',
      },
    ],
  };
}

/**
 * The team's real charges (the tasks its keys created, charged on create whatever their end) as
 * usage records by day. They carry no project or seeded API key, so those filters leave them out.
 */
function chargesByDay(
  state: SandboxState,
  caller: Caller,
  team: Team,
  from: number,
  until: number,
): Map<string, Usage[]> {
  const out = new Map<string, Usage[]>();
  const groupOf = new Map(team.members.map((m) => [m.id, m.groupId]));
  for (const t of state.tasks.charged()) {
    if (t.createdAt < from || t.createdAt >= until) continue;
    if (callerOf(t.key)?.teamId !== caller.teamId) continue;
    const day = isoDay(t.createdAt);
    const records = out.get(day) ?? out.set(day, []).get(day)!;
    const { tool, credits } = t.charge;
    records.push({
      day,
      userId: t.userId,
      tool,
      uses: 1,
      credits,
      project: '',
      groupId: groupOf.get(t.userId) ?? 0,
      apiKeyId: 0,
    });
  }
  return out;
}

export function registerAnalytics(app: FastifyInstance, state: SandboxState): void {
  app.post('/v1/analytics/team-credit-usage', async (req, reply) => {
    const caller = state.callerOf(req);
    if (!state.creditQuota.take(caller.key, state.now()))
      return sendError(reply, 429, 'Too many requests', { 'Retry-After': String(secondsToUtcMidnight(state.now())) });
    if (caller.role !== 'owner' && caller.role !== 'admin')
      return sendError(reply, 403, "Only team admins and owners can read the team's credit usage.");
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body))
      return sendInvalid(reply, [{ field: 'body', reason: 'must be a JSON object' }]);
    const bad: InvalidParam[] = [];
    const granularity = (body.granularity ?? 'day') as Granularity;
    if (!GRANULARITIES.includes(granularity))
      bad.push({ field: 'granularity', reason: `must be one of ${GRANULARITIES.join(', ')}` });
    const today = Date.parse(`${isoDay(state.now())}T00:00:00Z`);
    const end = dateField(body.end_date, 'end_date', bad) ?? today;
    const start = dateField(body.start_date, 'start_date', bad) ?? end - (CREDIT_USAGE_DEFAULT_DAYS - 1) * DAY;
    if (start > end) bad.push({ field: 'start_date', reason: 'must not be after end_date' });
    const maxDays = DEMO_KEY_PLANS[caller.key] === 'business' ? CREDIT_USAGE_MAX_DAYS_BUSINESS : CREDIT_USAGE_MAX_DAYS;
    if (start <= end && (end - start) / DAY + 1 > maxDays)
      bad.push({ field: 'start_date', reason: `the range cannot exceed ${maxDays} days on this plan` });
    const groups = intList(body.group_ids, 'group_ids', bad);
    const keys = idList(body.api_key_ids, 'api_key_ids', bad);
    let projects: string[] | undefined;
    if (body.project_references !== undefined) {
      if (!Array.isArray(body.project_references) || body.project_references.some((p) => typeof p !== 'string'))
        bad.push({ field: 'project_references', reason: 'must be a list of strings' });
      else projects = body.project_references as string[];
    }
    if (bad.length) return sendInvalid(reply, bad);

    const team = teamOf(caller, state.team);
    const charged = chargesByDay(state, caller, team, start, end + DAY);
    const buckets = new Map<
      string,
      Map<string, { uses: number; credits: number; users: Map<number, { uses: number; credits: number }> }>
    >();
    for (let d = start; d <= end; d += DAY) {
      const day = isoDay(d);
      const bucket = bucketOf(day, granularity);
      const tools = buckets.get(bucket) ?? buckets.set(bucket, new Map()).get(bucket)!;
      const history = caller.teamId === 1 ? usageOfDay(team, state.seed, day) : [];
      for (const u of [...history, ...(charged.get(day) ?? [])]) {
        if (groups && !groups.includes(u.groupId)) continue;
        if (keys && !keys.includes(String(u.apiKeyId))) continue;
        if (projects && !projects.includes(u.project)) continue;
        const name = usageCategoryOf(u.tool);
        const t = tools.get(name) ?? tools.set(name, { uses: 0, credits: 0, users: new Map() }).get(name)!;
        t.uses += u.uses;
        t.credits += u.credits;
        const perUser = t.users.get(u.userId) ?? t.users.set(u.userId, { uses: 0, credits: 0 }).get(u.userId)!;
        perUser.uses += u.uses;
        perUser.credits += u.credits;
      }
    }
    const email = new Map(team.members.map((m) => [m.id, m.email]));
    const groupNames = new Map(team.groups.map((g) => [g.id, g.name]));
    const groupName = new Map(team.members.map((m) => [m.id, groupNames.get(m.groupId)]));
    return {
      data: [...buckets].map(([date, tools]) => ({
        date,
        consumptions: [...tools].map(([tool, t]) => ({
          tool,
          user_uses: t.uses,
          user_credits: t.credits,
          user_usages: [...t.users].map(([id, u]) => ({
            user_id: id,
            email: email.get(id) ?? null,
            uses: u.uses,
            credits: u.credits,
            // The description's per-user fields beside the Sandbox's own.
            user_email: email.get(id) ?? null,
            user_uses: u.uses,
            user_credits: u.credits,
            group_name: groupName.get(id) ?? null,
          })),
        })),
      })),
    };
  });

  const listing = (path: string, view: (team: Team) => unknown[]) =>
    app.get(path, async (req: FastifyRequest) => ({ data: view(teamOf(state.callerOf(req), state.team)) }));
  // The description's shapes: members by e-mail only, keys by a string id.
  listing('/v1/analytics/team-members', (t) =>
    t.members.map((m) => ({ email: m.email, role: m.role, status: m.status === 'suspended' ? 'inactive' : m.status })),
  );
  listing('/v1/analytics/team-api-keys', (t) =>
    t.apiKeys.map((k) => ({
      api_key_id: String(k.id),
      display_name: k.name,
      status: k.status === 'revoked' ? 'inactive' : k.status,
      created_at: k.createdAt,
    })),
  );
  listing('/v1/analytics/team-groups', (t) =>
    t.groups.map((g) => ({
      group_id: g.id,
      name: g.name,
      member_count: t.members.filter((m) => m.groupId === g.id).length,
    })),
  );
  listing('/v1/analytics/team-projects', (t) =>
    t.projects.map((p) => ({ project_reference: p.reference, name: p.name })),
  );
}
