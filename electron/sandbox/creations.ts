import type { FastifyInstance } from 'fastify';
import { findTool } from '../../shared/catalogue/index.ts';
import { sendInvalid, type InvalidParam } from './errors.ts';
import { resultPath } from './results.ts';
import type { SandboxState } from './server.ts';
import { statusAt, type Task } from './tasks.ts';

export const CREATIONS_DEFAULT_PER_PAGE = 20;
export const CREATIONS_MAX_PER_PAGE = 100;

/** How many characters of a prompt name its creation. */
const NAME_CHARS = 80;

/**
 * A creation made from a prompt is named after it, as generative services title their
 * creations (the real shape is unconfirmed, api-notes); verbatim, so a client meets whatever
 * a user typed, control characters included. Others: the tool and the time.
 */
function nameOf(t: Task): string {
  if (typeof t.params.prompt === 'string' && t.params.prompt.trim()) return t.params.prompt.slice(0, NAME_CHARS);
  return `${findTool(t.toolId)?.title ?? t.toolId} ${new Date(t.createdAt).toISOString().slice(0, 16).replace('T', ' ')}`;
}

/** A numeric id of a task, stable across listings: the description's creations carry integers. */
const numericId = (uuid: string) => Number.parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);

/**
 * One creation in the description's shape: the listing's own fields, its thumbnail, and the file
 * under `creation` (its `url` and `family`). A text result (a prompt) has no file: its text is
 * in `creation.metadata`, an object the description leaves open.
 */
function creationItem(state: SandboxState, t: Task, userId: number) {
  const kind = t.resultKind;
  const url = kind === 'text' ? null : state.baseUrl() + resultPath(t, 0, kind);
  const at = new Date(t.createdAt).toISOString();
  return {
    id: numericId(t.id),
    reference: t.id,
    user_id: userId,
    folder_id: null,
    folder_reference: null,
    name: nameOf(t),
    external_id: null,
    thumbnail: kind === 'image' ? { url } : null,
    tool_name: t.toolId,
    created_at: at,
    updated_at: at,
    creation: {
      id: numericId(t.id),
      identifier: t.id,
      family: kind,
      tool: t.toolId,
      url,
      public: false,
      nsfw: false,
      status: 'completed',
      user_id: userId,
      created_at: at,
      metadata: kind === 'text' ? { text: t.text } : {},
    },
  };
}

/** Recent creations: the caller's completed task results, newest first. */
export function registerCreations(app: FastifyInstance, state: SandboxState): void {
  app.get('/v1/creations/recent', async (req, reply) => {
    const caller = state.callerOf(req);
    const q = req.query as Record<string, string | undefined>;
    const bad: InvalidParam[] = [];
    const int = (name: string, def: number, max?: number) => {
      const raw = q[name];
      if (raw === undefined) return def;
      if (!/^-?\d+$/.test(raw)) return (void bad.push({ field: name, reason: 'must be an integer' }), def);
      const n = Number(raw);
      if (n < 1) bad.push({ field: name, reason: 'must be greater than 0' });
      else if (max && n > max) bad.push({ field: name, reason: `must be at most ${max}` });
      return n;
    };
    const page = int('page', 1);
    const perPage = int('per_page', CREATIONS_DEFAULT_PER_PAGE, CREATIONS_MAX_PER_PAGE);
    if (bad.length) return sendInvalid(reply, bad);
    const now = state.now();
    const toolName = q.tool_name;
    const all = state.tasks
      .ofKey(caller.key)
      .filter(
        (t) => !t.toolId.startsWith('app:') && (!toolName || t.toolId === toolName) && statusAt(t, now) === 'COMPLETED',
      );
    const items = all.slice((page - 1) * perPage, page * perPage).map((t) => creationItem(state, t, caller.userId));
    return {
      data: items,
      meta: {
        pagination: {
          current_page: page,
          per_page: perPage,
          last_page: Math.max(1, Math.ceil(all.length / perPage)),
          total: all.length,
        },
      },
    };
  });
}
