import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ImportReport } from '../../shared/contract/audit.ts';
import { interruptWhen, runCli } from '../cli.ts';
import { cachedEvents, makeEvent, shuffle, tempDir } from './helpers.ts';

// The real CLI in its own process over a real SQLite cache, stopped by Ctrl-C (SIGINT); no API is reached.
const tmp = tempDir('md-audit-interrupt-');
afterAll(() => tmp.cleanup());

/** An export of `count` events in shuffled date order, written a line at a time (it is tens of MB). */
async function shuffledExport(path: string, count: number): Promise<string> {
  const out = createWriteStream(path);
  for (const i of shuffle(
    Array.from({ length: count }, (_, k) => k),
    7,
  )) {
    if (!out.write(JSON.stringify(makeEvent(i)) + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise((r) => out.end(r));
  return path;
}

// Over 48 MB: staged by a worker thread, as a real export of this size is (import.ts STAGE_MIN_BYTES).
const total = 90_000;
let exported: Promise<string> | undefined;
const bigExport = () => (exported ??= shuffledExport(join(tmp.dir, 'audit.ndjson'), total));
const envFor = (home: string) => ({
  MEDIADESK_HOME: join(tmp.dir, home),
  MEDIADESK_API_URL: 'http://127.0.0.1:9',
  MEDIADESK_API_KEY: 'unused',
});

describe('mediadesk audit import, Ctrl-C', () => {
  it('a file large enough to be staged, out of date order, stopped once rows are held back: the report and the message count what the cache holds and what was read but not added, and the same command again adds exactly the rest', async () => {
    const file = await bigExport();
    const env = envFor('home');
    // Stopped as soon as the CLI says rows are being held back: a batch fell among earlier ones' dates.
    // (Waiting for a progress line with rows added raced the once-a-second progress on a fast machine.)
    const stopped = await interruptWhen(['audit', 'import', file, '--json'], {
      env,
      until: /: not in date order from about item \d+: the rest is read first and added in date order at the end\n/,
    });
    expect(stopped.code, stopped.err).toBe(130);
    const [r] = JSON.parse(stopped.out) as ImportReport[];
    const cached = await cachedEvents(env.MEDIADESK_HOME);
    expect(r.accepted).toBe(cached);
    expect(r.interrupted).toBe(true);
    expect(r.notAdded).toBeGreaterThan(0);
    expect(r.items - r.accepted - r.duplicates - r.rejected).toBe(r.notAdded ?? 0);
    const notYet = r.notAdded ? `; ${r.notAdded} more read were not added yet` : '';
    expect(stopped.err).toContain(
      `interrupted: ${cached} event(s) imported so far are kept${notYet}; run the same command again to continue`,
    );

    const again = await runCli(['audit', 'import', file, '--json'], { env });
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject([
      { items: total, accepted: total - cached, duplicates: cached, rejected: 0 },
    ]);
  }, 180_000);

  it('a Ctrl-C during the last step (the held-back events added in date order), which finishes anyway: exit 0, the import complete, and the interrupt said to have come too late', async () => {
    const file = await bigExport();
    const env = envFor('home-late');
    const late = await interruptWhen(['audit', 'import', file, '--json'], {
      env,
      until: /held back, in date order; this last step finishes even if interrupted/,
    });
    expect(late.err).toMatch(
      /: adding the [1-9]\d* event\(s\) held back, in date order; this last step finishes even if interrupted\n/,
    );
    expect(late.err).toContain(
      'interrupted too late to stop the import: it had already finished, and every event it reports is kept\n',
    );
    expect(late.err).not.toContain('run the same command again');
    expect(late.code, late.err).toBe(0);
    const [r] = JSON.parse(late.out) as ImportReport[];
    expect(r).toMatchObject({ items: total, accepted: total, duplicates: 0, rejected: 0 });
    expect(r.interrupted).toBeUndefined();
    expect(r.notAdded).toBeUndefined();
    expect(await cachedEvents(env.MEDIADESK_HOME)).toBe(total);
  }, 180_000);
});
