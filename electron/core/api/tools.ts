import { randomUUID } from 'node:crypto';
import {
  getTool,
  imageMimeOf,
  resolvePaths,
  wireValue,
  type ResolvedPaths,
  type Slugs,
  type ToolEntry,
} from '../../../shared/catalogue/index.ts';
import type { ApiClient } from './client.ts';

export const TASK_STATUSES = ['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export type GeneratedItem = string | { url: string; content_type?: string };

export interface TaskEnvelope {
  taskId: string;
  status: TaskStatus;
  /** Result URLs (or prompt text for image-to-prompt); null when a list item omits it. */
  generated: GeneratedItem[] | null;
  /** The server's reason when a task FAILED, if it gives one. */
  error?: string;
}

/** Thrown when a 2xx body is not a task envelope: treated like any other unreadable answer. */
export class EnvelopeError extends Error {
  override name = 'EnvelopeError';
}

function readGenerated(v: unknown): GeneratedItem[] | null {
  if (!Array.isArray(v)) return null;
  return v.flatMap((g): GeneratedItem[] => {
    if (typeof g === 'string') return [g];
    if (g && typeof g === 'object' && typeof (g as { url?: unknown }).url === 'string') {
      const item = g as { url: string; content_type?: unknown };
      return [
        typeof item.content_type === 'string' ? { url: item.url, content_type: item.content_type } : { url: item.url },
      ];
    }
    return [];
  });
}

/** Reads an envelope defensively: with or without the `data` wrapper (api-notes, Webhooks). */
export function readEnvelope(body: unknown): TaskEnvelope {
  const outer = body as { data?: unknown } | null;
  const d = (
    outer && typeof outer === 'object' && outer.data && typeof outer.data === 'object' && !Array.isArray(outer.data)
      ? outer.data
      : outer
  ) as Record<string, unknown> | null;
  const taskId = d?.task_id;
  // The style transfer's create is described answering `task_status` where every other says `status`.
  const said = d?.status ?? d?.task_status;
  const status = typeof said === 'string' ? said.toUpperCase() : undefined;
  if (typeof taskId !== 'string' || !taskId) throw new EnvelopeError('the server answered without a task_id');
  if (!status || !(TASK_STATUSES as readonly string[]).includes(status))
    throw new EnvelopeError(`the server answered with an unknown task status "${String(said)}"`);
  const error = [d?.error, d?.message].find((m): m is string => typeof m === 'string');
  return { taskId, status: status as TaskStatus, generated: readGenerated(d?.generated), ...(error ? { error } : {}) };
}

/**
 * A synchronous create's answer (background removal, the classifier, the classic text-to-image) as
 * a finished task: its base64 images as data URIs, its result URLs (the one named `url` where there
 * is one: the others are the input and a preview), or for text each answer item as a line. An answer
 * that is a task after all is read as one.
 */
export function syncEnvelope(tool: ToolEntry, body: unknown): TaskEnvelope {
  if (JSON.stringify(body ?? null).includes('"task_id"')) return readEnvelope(body);
  const outer = body as { data?: unknown } | null;
  const data = outer && typeof outer === 'object' && 'data' in outer ? outer.data : body;
  const taskId = `sync-${randomUUID()}`;
  if (tool.result === 'text') {
    const items = Array.isArray(data) ? data : [data];
    const line = (v: unknown) =>
      v && typeof v === 'object' ? Object.values(v).map(String).join(' ') : String(v ?? '');
    return { taskId, status: 'COMPLETED', generated: [items.map(line).join('\n')] };
  }
  const inline: GeneratedItem[] = [];
  const urls: string[] = [];
  let named: string | null = null;
  const walk = (v: unknown, key: string, depth: number) => {
    if (depth > 6) return;
    if (typeof v === 'string') {
      if (key === 'base64') inline.push({ url: `data:${imageMimeOf(v)};base64,${v}`, content_type: imageMimeOf(v) });
      else if (/^https?:\/\//.test(v)) {
        if (key === 'url' && depth <= 2) named ??= v;
        urls.push(v);
      }
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key, depth + 1));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k, depth + 1);
  };
  walk(data, '', 0);
  let generated: GeneratedItem[] = urls;
  if (inline.length) generated = inline;
  else if (named) generated = [named];
  if (!generated.length) throw new EnvelopeError('the server answered without a result');
  return { taskId, status: 'COMPLETED', generated };
}

/** The create body: only body fields, the catalogue's path fields fill the URL instead. */
export function bodyOf(tool: ToolEntry, params: Record<string, unknown>): Record<string, unknown> {
  const fields = new Map(tool.fields.map((f) => [f.name, f]));
  return Object.fromEntries(
    Object.entries(params)
      .filter(([k, v]) => fields.get(k)?.in !== 'path' && v !== undefined)
      .map(([k, v]) => [k, fields.has(k) ? wireValue(fields.get(k)!, v) : v]),
  );
}

/** A body as form fields: strings as they are, anything else as its JSON. */
const formOf = (body: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

/**
 * The typed client of every task tool, generated from the catalogue: one entry per tool gives its
 * create/list/by-id paths; this class adds nothing tool-specific.
 */
export class ToolClient {
  readonly api: ApiClient;
  constructor(api: ApiClient) {
    this.api = api;
  }

  paths(toolId: string, slugs: Slugs, params: Record<string, unknown> = {}): ResolvedPaths {
    return resolvePaths(getTool(toolId), slugs, params);
  }

  /** Sends a create. Never retried by the caller unless the error proves it was not processed. */
  async create(toolId: string, slugs: Slugs, params: Record<string, unknown>): Promise<TaskEnvelope> {
    const tool = getTool(toolId);
    const path = resolvePaths(tool, slugs, params).create;
    const body = bodyOf(tool, params);
    const answer = tool.form
      ? await this.api.createForm<unknown>(path, formOf(body))
      : await this.api.create<unknown>(path, body);
    return tool.sync ? syncEnvelope(tool, answer) : readEnvelope(answer);
  }

  async byId(toolId: string, slugs: Slugs, params: Record<string, unknown>, taskId: string): Promise<TaskEnvelope> {
    return readEnvelope(await this.api.get<unknown>(this.paths(toolId, slugs, params).byId(taskId)));
  }

  /**
   * A collection's task list: one plain GET. The list endpoints declare no query parameters
   * (api-notes: paging is undocumented), and the service may show only some of the caller's tasks
   * (the newest), so what it leaves out is the caller's to ask about by id.
   */
  async list(listPath: string): Promise<TaskEnvelope[]> {
    const body = await this.api.get<{ data?: unknown }>(listPath);
    const data = Array.isArray(body?.data) ? body.data : [];
    const items: TaskEnvelope[] = [];
    for (const item of data) {
      try {
        items.push(readEnvelope(item));
      } catch {
        // One unreadable item must not stall polling of the others; they fall back to by-id.
      }
    }
    return items;
  }
}
