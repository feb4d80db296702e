import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { rngFrom, uuidFrom } from '../electron/sandbox/rng.ts';

/**
 * Synthetic audit events shaped like the API's (api-spec: Audit-log event) for the benchmarks:
 * a team of 60 members in 8 groups, 48 folders, 13 event types, 15 days, 1-4 events per request.
 */
const TYPES = [
  ['team.member.role_changed', 'update', 'team'],
  ['team.member.invited', 'create', 'team'],
  ['team.member.removed', 'delete', 'team'],
  ['team.group.updated', 'update', 'team'],
  ['project.folder.shared', 'share', 'project'],
  ['project.folder.created', 'create', 'project'],
  ['project.folder.deleted', 'delete', 'project'],
  ['project.project.created', 'create', 'project'],
  ['creation.image.generated', 'create', 'creation'],
  ['creation.video.generated', 'create', 'creation'],
  ['security.api_key.created', 'create', 'security'],
  ['security.api_key.revoked', 'delete', 'security'],
  ['auth.session.started', 'login', null],
] as const;
const WORDS = [
  'Spring campaign',
  'Catalogue 2025',
  'Onboarding videos',
  'Website refresh',
  'Podcast art',
  'Retail displays',
  'Event teasers',
  'Lookbook',
  'Packaging',
  'Investor deck',
  'Help centre',
  'Recruiting',
];
const FOLDER = ['Drafts', 'Approved', 'Hero shots', 'Variants', 'Archive', 'Review'];

// The Sandbox's seeded PRNG: the same seed gives the same file.
const rng = rngFrom;

export const BENCH_END = Date.parse('2026-03-16T00:00:00Z');
export const BENCH_SPAN = 15 * 86_400_000;

/**
 * `random`: dates in random order over the span. `newest-first`: an export as the API pages it,
 * dates falling through the file (same fields otherwise).
 */
export type BenchOrder = 'random' | 'newest-first';

export function* benchEvents(
  count: number,
  seed = 1,
  order: BenchOrder = 'random',
): Generator<Record<string, unknown>> {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
  let i = 0;
  while (i < count) {
    const u = r();
    const t =
      order === 'random'
        ? BENCH_END - Math.floor(u * BENCH_SPAN)
        : BENCH_END - Math.floor(((i + u) / count) * BENCH_SPAN);
    const actor = 1 + Math.floor(r() * 60);
    const req = `req_${i.toString(36)}_${Math.floor(r() * 1e9).toString(36)}`;
    const cor = r() < 0.5 ? `cor_${Math.floor(r() * 1e8).toString(36)}` : null;
    const n = r() < 0.55 ? 1 : 2 + Math.floor(r() * 3);
    for (let k = 0; k < n && i < count; k++, i++) {
      const [type, verb, category] = pick(TYPES);
      const p = Math.floor(r() * WORDS.length);
      const f = Math.floor(r() * 4);
      const folder = `fld_${p}_${f}`;
      const ok = r() < 0.9;
      yield {
        // Random, as the Sandbox makes them (evt_ + a UUID's hex): ids that rose with the file made
        // the event_id index look far cheaper than it is (bench/history/audit-import.md, seventh round).
        event_id: `evt_${uuidFrom(r).replace(/-/g, '')}`,
        date: new Date(order === 'random' ? t + k : t - k).toISOString(),
        action: {
          event_type: type,
          verb,
          status: ok ? 'succeeded' : 'failed',
          resource_id: folder,
          request_id: req,
          correlation_id: cor,
          old_state: r() < 0.5 ? { role: pick(['member', 'admin', 'viewer']), status: 'active' } : null,
          new_state:
            r() < 0.5 ? { role: pick(['member', 'admin', 'viewer']), status: pick(['active', 'removed']) } : null,
          duration_ms: r() < 0.7 ? Math.floor(r() * 2500) : null,
          data: {
            target_user_id: 1 + Math.floor(r() * 60),
            role: pick(['member', 'admin', 'viewer']),
            group_id: 101 + Math.floor(r() * 8),
            operation: pick(['generate', 'upscale', 'edit', 'share', 'rotate']),
            project_reference: `prj_${p}`,
            folder_reference: folder,
            share_type: pick(['link', 'team', 'group']),
            permission: pick(['view', 'edit', 'admin']),
            outcome: ok ? 'success' : 'denied',
          },
          context: r() < 0.5 ? { client: pick(['web', 'api', 'desktop']), locale: 'en' } : null,
          project_name: WORDS[p],
          folder_name: `${WORDS[p]} / ${FOLDER[(p + f) % FOLDER.length]}`,
        },
        member: { type: 'user', user_id: actor, email: `member${actor}@bench.test` },
        category,
        source: { project: WORDS[p], platform: pick(['web', 'api', 'desktop']) },
      };
    }
  }
}

/**
 * Writes `count` events as NDJSON, streamed. Window k > 0 is the span k spans before the bench's,
 * with other event ids (another seed): the next month's export, say.
 */
export async function writeNdjson(
  path: string,
  count: number,
  order: BenchOrder = 'random',
  window = 0,
): Promise<number> {
  const out = createWriteStream(path);
  let buf = '';
  let bytes = 0;
  for (const e of benchEvents(count, 1 + window, order)) {
    if (window) e.date = new Date(Date.parse(e.date as string) - window * BENCH_SPAN).toISOString();
    buf += JSON.stringify(e) + '\n';
    if (buf.length > 1 << 20) {
      bytes += buf.length;
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  bytes += buf.length;
  out.end(buf);
  await once(out, 'finish');
  return bytes;
}
