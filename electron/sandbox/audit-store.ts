import { intBetween, pick, rngFrom, seedOf, uuidFrom, type Rng } from './rng.ts';
import type { Team } from './team.ts';

/** Keys the public API may return (spec rule 1); everything else a raw event carries is internal. */
export const ALLOWED_DATA_KEYS = [
  'target_user_id',
  'role',
  'group_id',
  'operation',
  'project_reference',
  'folder_reference',
  'share_type',
  'permission',
  'outcome',
] as const;
export const ALLOWED_STATE_KEYS = ['role', 'status', 'name', 'permission', 'share_type', 'member_count'] as const;
/** Internals the seeded raw events carry on purpose, so the allow-list is exercised (spec rule 2). */
export const STRIPPED_KEYS = [
  'provider_model',
  'billing_state',
  'moderation_flags',
  'internal_plan_id',
  'moderation_score',
] as const;

export const SEEDED_EVENT_COUNT = 6000;
export const RETENTION_DAYS = 15;
const DAY = 86_400_000;

type Dict = Record<string, unknown>;

/** One event type as data: which payload keys it fills and whether it records a state change. */
interface EventKind {
  type: string;
  verb: string;
  category: string | null;
  data: readonly string[];
  states?: readonly string[];
}

export const EVENT_KINDS: readonly EventKind[] = [
  {
    type: 'team.member.role_changed',
    verb: 'update',
    category: 'team',
    data: ['target_user_id', 'role', 'group_id'],
    states: ['role'],
  },
  {
    type: 'team.member.invited',
    verb: 'create',
    category: 'team',
    data: ['target_user_id', 'role', 'group_id'],
    states: ['status'],
  },
  {
    type: 'team.member.removed',
    verb: 'delete',
    category: 'team',
    data: ['target_user_id', 'group_id'],
    states: ['status'],
  },
  {
    type: 'team.group.updated',
    verb: 'update',
    category: 'team',
    data: ['group_id', 'operation'],
    states: ['name', 'member_count'],
  },
  {
    type: 'project.folder.shared',
    verb: 'share',
    category: 'project',
    data: ['project_reference', 'folder_reference', 'share_type', 'permission'],
    states: ['share_type', 'permission'],
  },
  {
    type: 'project.folder.created',
    verb: 'create',
    category: 'project',
    data: ['project_reference', 'folder_reference'],
  },
  {
    type: 'project.folder.deleted',
    verb: 'delete',
    category: 'project',
    data: ['project_reference', 'folder_reference'],
    states: ['status'],
  },
  { type: 'project.project.created', verb: 'create', category: 'project', data: ['project_reference'] },
  {
    type: 'creation.image.generated',
    verb: 'create',
    category: 'creation',
    data: ['operation', 'project_reference', 'folder_reference', 'outcome'],
  },
  {
    type: 'creation.video.generated',
    verb: 'create',
    category: 'creation',
    data: ['operation', 'project_reference', 'outcome'],
  },
  {
    type: 'security.api_key.created',
    verb: 'create',
    category: 'security',
    data: ['operation', 'outcome'],
    states: ['status'],
  },
  {
    type: 'security.api_key.revoked',
    verb: 'delete',
    category: 'security',
    data: ['operation', 'outcome'],
    states: ['status'],
  },
  { type: 'auth.session.started', verb: 'login', category: null, data: ['outcome'] },
];

/** A raw stored event: the public shape plus internals and the fields filters use. */
export interface StoredEvent {
  t: number;
  seq: number;
  groupIds: number[];
  raw: Dict;
}

export interface AuditFilter {
  fromMs: number;
  toMs: number;
  memberIds?: number[];
  groupIds?: number[];
  folderIds?: string[];
  eventTypes?: string[];
  requestId?: string;
}

function pickKeys(obj: Dict | null | undefined, keys: readonly string[]): Dict | null {
  if (!obj) return null;
  const out: Dict = {};
  for (const k of keys) if (k in obj) out[k] = obj[k];
  return out;
}

/** The public view of an event: data and states narrowed to the allow-lists. */
export function publicEvent(e: StoredEvent): Dict {
  const raw = e.raw as { action: Dict } & Dict;
  const action = raw.action;
  return {
    event_id: raw.event_id,
    date: raw.date,
    action: {
      event_type: action.event_type,
      verb: action.verb,
      status: action.status,
      resource_id: action.resource_id,
      request_id: action.request_id,
      correlation_id: action.correlation_id,
      old_state: pickKeys(action.old_state as Dict | null, ALLOWED_STATE_KEYS),
      new_state: pickKeys(action.new_state as Dict | null, ALLOWED_STATE_KEYS),
      duration_ms: action.duration_ms,
      data: pickKeys(action.data as Dict, ALLOWED_DATA_KEYS) ?? {},
      context: action.context,
      project_name: action.project_name,
      folder_name: action.folder_name,
    },
    member: raw.member,
    category: raw.category,
    source: raw.source,
  };
}

/** Newest first; ties broken by insertion sequence so the order is total (cursor needs it). */
const newer = (a: { t: number; seq: number }, b: { t: number; seq: number }) =>
  a.t !== b.t ? a.t > b.t : a.seq > b.seq;

export class AuditStore {
  /** Sorted newest first. */
  events: StoredEvent[] = [];
  private seq = 0;
  private readonly rng: Rng;
  private readonly team: Team;

  constructor(team: Team, seed: number, nowMs: number, seededEvents = SEEDED_EVENT_COUNT) {
    this.team = team;
    this.rng = rngFrom(seedOf(seed, 'audit'));
    // Requests emit 1..4 events each; keep going until the floor is reached.
    const seeded: StoredEvent[] = [];
    while (seeded.length < seededEvents) {
      const t = nowMs - Math.floor(this.rng() * (RETENTION_DAYS * DAY - 60_000)) - 1000;
      seeded.push(...this.request(t));
    }
    seeded.sort((a, b) => (newer(a, b) ? -1 : 1));
    this.events = seeded;
  }

  /** Appends `count` events at `nowMs` (control API), the way a live trail grows during paging. */
  append(count: number, nowMs: number): StoredEvent[] {
    const added: StoredEvent[] = [];
    while (added.length < count) added.push(...this.request(nowMs).slice(0, count - added.length));
    for (const e of added) {
      let i = 0;
      while (i < this.events.length && newer(this.events[i], e)) i++;
      this.events.splice(i, 0, e);
    }
    return added;
  }

  query(f: AuditFilter): StoredEvent[] {
    const members = f.memberIds && new Set(f.memberIds);
    const groups = f.groupIds && new Set(f.groupIds);
    const folders = f.folderIds && new Set(f.folderIds);
    const types = f.eventTypes && new Set(f.eventTypes);
    return this.events.filter((e) => {
      if (e.t < f.fromMs || e.t > f.toMs) return false;
      const a = e.raw.action as Dict;
      if (f.requestId !== undefined && a.request_id !== f.requestId) return false;
      if (types && !types.has(a.event_type as string)) return false;
      if (members && !members.has((e.raw.member as Dict).user_id as number)) return false;
      if (groups && !e.groupIds.some((g) => groups.has(g))) return false;
      if (folders && !folders.has((a.data as Dict).folder_reference as string)) return false;
      return true;
    });
  }

  /** All events of one request share request_id, date (to the second) and a correlation id. */
  private request(t: number): StoredEvent[] {
    const rng = this.rng;
    const { members, groups, projects, folders } = this.team;
    const actor = pick(rng, members);
    const requestId = `req_${uuidFrom(rng).replace(/-/g, '').slice(0, 20)}`;
    const correlationId = rng() < 0.5 ? `cor_${uuidFrom(rng).slice(0, 8)}` : null;
    const n = rng() < 0.55 ? 1 : intBetween(rng, 2, 4);
    const platform = pick(rng, ['web', 'api', 'desktop', null] as const);
    const out: StoredEvent[] = [];
    for (let i = 0; i < n; i++) {
      const kind = pick(rng, EVENT_KINDS);
      const target = pick(rng, members);
      const folder = pick(rng, folders);
      const project = projects.find((p) => p.reference === folder.projectReference)!;
      const group = pick(rng, groups);
      const values: Dict = {
        target_user_id: target.id,
        role: pick(rng, ['member', 'admin', 'viewer']),
        group_id: group.id,
        operation: pick(rng, ['generate', 'upscale', 'edit', 'share', 'rotate']),
        project_reference: project.reference,
        folder_reference: folder.reference,
        share_type: pick(rng, ['link', 'team', 'group']),
        permission: pick(rng, ['view', 'edit', 'admin']),
        outcome: rng() < 0.9 ? 'success' : 'denied',
      };
      const data: Dict = Object.fromEntries(kind.data.map((k) => [k, values[k]]));
      // Internals a raw provider event would carry; the public view must drop them.
      data.provider_model = 'internal-model-7';
      data.billing_state = { credits_reserved: intBetween(rng, 1, 90) };
      data.moderation_flags = rng() < 0.05 ? ['review'] : [];
      const state = (old: boolean): Dict | null => {
        if (!kind.states) return null;
        const s: Dict = {};
        for (const k of kind.states) {
          if (k === 'member_count') s[k] = intBetween(rng, 2, 20);
          else if (k === 'name') s[k] = `${group.name}${old ? '' : ' team'}`;
          else if (k === 'status') s[k] = old ? 'active' : 'removed';
          else s[k] = values[k];
        }
        if (kind.states.includes('role')) s.role = old ? target.role : values.role;
        s.internal_plan_id = 'plan_ent_42';
        s.moderation_score = 0.01;
        return s;
      };
      const seq = ++this.seq;
      const date = t + i;
      const usesFolder = kind.data.includes('folder_reference');
      const usesProject = kind.data.includes('project_reference');
      let resourceId: string | null = null;
      if (usesFolder) resourceId = folder.reference;
      else if (usesProject) resourceId = project.reference;
      else if (kind.data.includes('target_user_id')) resourceId = String(target.id);
      out.push({
        t: date,
        seq,
        groupIds: [...new Set([actor.groupId, ...(kind.data.includes('group_id') ? [group.id] : [])])],
        raw: {
          event_id: `evt_${uuidFrom(rng).replace(/-/g, '')}`,
          date: new Date(date).toISOString(),
          action: {
            event_type: kind.type,
            verb: kind.verb,
            status: values.outcome === 'success' ? 'succeeded' : 'failed',
            resource_id: resourceId,
            request_id: requestId,
            correlation_id: correlationId,
            old_state: state(true),
            new_state: state(false),
            duration_ms: rng() < 0.7 ? intBetween(rng, 3, 2500) : null,
            data,
            context: rng() < 0.5 ? { client: platform ?? 'unknown', locale: 'en' } : null,
            project_name: usesProject || usesFolder ? project.name : null,
            folder_name: usesFolder ? folder.name : null,
          },
          member:
            rng() < 0.93
              ? { type: 'user', user_id: actor.id, email: actor.email }
              : { type: 'api_key', user_id: actor.id, email: null },
          category: kind.category,
          source: {
            project: usesProject ? project.name : null,
            platform,
            ...(platform === 'web' ? { referer: 'https://app.sandbox.test/workspace' } : {}),
          },
        },
      });
    }
    return out;
  }
}
