import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEvent, type EventRow } from '../../electron/core/audit/event.ts';
import { AuditService } from '../../electron/core/audit/service.ts';
import type { ApiTarget } from '../../electron/core/api/client.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import type { TestContext } from 'vitest';
import type { AuditFilters, AuditSort } from '../../shared/contract/audit.ts';
import type { createDispatcher, Reply } from '../../electron/core/dispatch.ts';

export function tempDir(prefix = 'md-audit-'): {
  dir: string;
  file: (name: string, content: string | Buffer) => string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file: (name, content) => {
      const p = join(dir, name);
      writeFileSync(p, content);
      return p;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The events table's indexes: eight of migration 1 (10 reshaped five without their date), event_id's (6), actors without a user id by e-mail (7). */
export const EVENT_INDEXES = 10;

const noApi = async (): Promise<ApiTarget> => {
  throw new Error('this test does not talk to the API');
};

export function openService(
  dbPath: string,
  o: Partial<ConstructorParameters<typeof AuditService>[0]> = {},
): AuditService {
  return new AuditService({ dbPath, target: noApi, ...o });
}

/** The events a data folder's audit cache holds, read from its file: no CLI process spent on a count. */
export async function cachedEvents(home: string): Promise<number> {
  const service = openService(dbPaths(home).audit);
  try {
    return service.store.counts().events;
  } finally {
    await service.close();
  }
}

/** A dispatcher's answer, or its error thrown with its code. */
export function result<T>(r: Reply): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.result as T;
}

/**
 * Two windows press Stop (`cancel`): the first one's answer, and what `told` (the events every
 * window hears, as the test logs them) held when it came; the second's is not waited for.
 */
export async function stopTwice(
  dispatch: ReturnType<typeof createDispatcher>,
  cancel: 'audit.importCancel' | 'audit.syncCancel',
  told: readonly string[],
): Promise<{ stopped: boolean; heard: string[] }> {
  const { stopped } = result<{ stopped: boolean }>(await dispatch(cancel, {}));
  const heard = [...told];
  await dispatch(cancel, {});
  return { stopped, heard };
}

/** The cache row of an event the test knows to be well formed. */
export function rowOf(e: unknown): EventRow {
  const c = checkEvent(e);
  if (!c.ok) throw new Error(c.reason);
  return c.row;
}

const TYPES = [
  'team.member.role_changed',
  'project.folder.shared',
  'creation.image.generated',
  'security.api_key.revoked',
];

/** A well-formed event as the API gives it; `i` makes it distinct and deterministic. */
export function makeEvent(i: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: `evt_${i}`,
    date: new Date(Date.UTC(2026, 2, 1) + i * 600_000).toISOString(),
    action: {
      event_type: TYPES[i % TYPES.length],
      verb: 'update',
      status: i % 10 === 0 ? 'failed' : 'succeeded',
      resource_id: `fld_${i % 5}`,
      request_id: `req_${Math.floor(i / 3)}`,
      correlation_id: i % 2 ? `cor_${i % 7}` : null,
      old_state: { role: 'member' },
      new_state: { role: i % 3 ? 'admin' : 'viewer' },
      duration_ms: 10 + i,
      data: {
        group_id: 101 + (i % 4),
        folder_reference: `fld_${i % 5}`,
        role: 'admin',
        outcome: i % 10 === 0 ? 'denied' : 'success',
      },
      context: { client: 'web' },
      project_name: `Project ${i % 3}`,
      folder_name: `Folder ${i % 5}`,
    },
    member: { type: 'user', user_id: 1 + (i % 6), email: `user${1 + (i % 6)}@example.test` },
    category: 'team',
    source: { project: null, platform: 'web' },
    ...over,
  };
}

/** The list in a fixed pseudo-random order (the same for the same seed). */
export function shuffle<T>(list: readonly T[], seed = 4242): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Every event id a query yields, walking the keyset cursor page by page, as the viewer does. */
export function walkPages(service: AuditService, filters: AuditFilters, sort: AuditSort, limit: number): string[] {
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = service.query({ filters, sort, limit, after });
    out.push(...page.rows.map((r) => r.eventId));
    if (!page.next) return out;
    after = page.next;
  }
}

/**
 * A real small file system to fill up, for one test: a 32 MB tmpfs (mounting needs root, as CI
 * has), unmounted when the test finishes. Where mounting fails, the test says so and skips.
 */
export function smallDisk(ctx: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'md-audit-full-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    const note = `SKIPPED: this full-disk test needs a small tmpfs, and mount failed here: ${(r.stderr || r.error?.message || '').trim()}`;
    console.warn(note);
    ctx.skip(note);
  }
  ctx.onTestFinished(() => {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system holding `dir` to the last byte, as another program would; returns the filler's path. */
export function fillDisk(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          writeSync(fd, chunk, 0, size);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

/**
 * One NDJSON line of a well-formed event `i` with an extra top-level field `levels` deep (about
 * 2 bytes a level): outside data, old_state and new_state, which the payload's own limit covers.
 */
export function deepEventLine(i: number, levels = 5000): string {
  return JSON.stringify(makeEvent(i)).replace(/}$/, `,"extra":${'['.repeat(levels)}${']'.repeat(levels)}}`);
}

/** Every cached event as stored (columns and raw text), in key order: equal before and after when nothing was changed. */
export function cacheSnapshot(service: AuditService): unknown[] {
  return service.store.db
    .prepare('SELECT e.*, r.raw FROM events AS e JOIN events_raw AS r ON r.seq = e.seq ORDER BY e.seq')
    .all();
}
