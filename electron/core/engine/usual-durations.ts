import { keylessIdentity } from '../../../shared/contract/backend-identity.ts';
import type { Db } from '../db/open.ts';

/** Samples kept per tool and backend: the median of these is the tool's usual duration. */
const KEEP = 15;
/** One task in this many of a known tool is first asked at half its usual duration (see `firstAsk`). */
export const EXPLORE_EVERY = 8;

/**
 * How long each tool's tasks usually take on a backend, learned from the ones seen finished and
 * kept in the queue database (queue migration 14), so a lone task of a tool used before is first
 * asked when such tasks usually end, in this run or the next. Each sample is the age at which the
 * task was seen done, or at which the ask that saw it was due if it was sent late (no creep).
 */
export class UsualDurations {
  private readonly seen = new Map<string, Learned>();
  /** Learned since the last `save`. */
  private readonly changed = new Set<Learned>();
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare('SELECT samples, tasks FROM usual_durations WHERE backend = ? AND tool = ?'),
      set: db.prepare(
        'INSERT INTO usual_durations (backend, tool, samples, tasks) VALUES (?, ?, ?, ?) ON CONFLICT (backend, tool) DO UPDATE SET samples = excluded.samples, tasks = excluded.tasks',
      ),
    };
  }

  /** The median, or null before any task of the tool was seen finished on this backend. */
  of(backend: string | null, tool: string): number | null {
    const learned = this.learned(durationsKey(backend), tool);
    if (learned.median === undefined) {
      const sorted = [...learned.samples].sort((a, b) => a - b);
      learned.median = sorted.length ? sorted[sorted.length >> 1] : null;
    }
    return learned.median;
  }

  /**
   * Whether the next task of the tool is one that is asked early: one in EXPLORE_EVERY of a known
   * tool, counted across runs, so a tool that got faster is noticed even when each run makes one
   * task (nothing else asks sooner).
   */
  explore(backend: string | null, tool: string): boolean {
    const learned = this.learned(durationsKey(backend), tool);
    return learned.samples.length > 0 && ++learned.created % EXPLORE_EVERY === 0;
  }

  /**
   * A task seen done at `ageMs` (kept by the next `save`); `faster`: an early-asked task done
   * before the usual, whose samples it replaces.
   */
  record(backend: string | null, tool: string, ageMs: number, faster = false): void {
    const b = durationsKey(backend);
    const learned = this.learned(b, tool);
    const { samples } = learned;
    if (faster) samples.length = 0;
    samples.push(Math.round(ageMs));
    if (samples.length > KEEP) samples.splice(0, samples.length - KEEP);
    learned.tasks++;
    learned.median = undefined;
    this.changed.add(learned);
  }

  /** Writes what was learned since the last call (one row per tool, however many tasks taught it). */
  save(): void {
    for (const l of this.changed) this.stmts.set.run(l.backend, l.tool, JSON.stringify(l.samples), l.tasks);
    this.changed.clear();
  }

  private learned(backend: string, tool: string): Learned {
    const key = `${backend}\n${tool}`;
    let learned = this.seen.get(key);
    if (!learned) {
      const row = this.stmts.get.get(backend, tool) as { samples: string; tasks: number } | undefined;
      const samples = parseSamples(row?.samples);
      learned = { backend, tool, samples, tasks: row?.tasks ?? 0, created: row?.tasks ?? 0 };
      this.seen.set(key, learned);
    }
    return learned;
  }
}

interface Learned {
  backend: string;
  tool: string;
  samples: number[];
  /** Tasks learned from, ever. */
  tasks: number;
  /** The samples' median once asked (every poll asks it), until the next sample; null when none. */
  median?: number | null;
  /** Tasks created with the duration known: those learned from before this run, then one a create. */
  created: number;
}

/** Durations are the server's, whatever key is used: the keyless identity, '' when none is told. */
function durationsKey(backend: string | null): string {
  return backend === null ? '' : (keylessIdentity(backend) ?? backend);
}

/** What was stored, or nothing when it is not a list of durations (a file edited by hand). */
function parseSamples(json: string | undefined): number[] {
  if (json === undefined) return [];
  try {
    const v: unknown = JSON.parse(json);
    if (Array.isArray(v) && v.every((n) => Number.isFinite(n) && n >= 0)) return (v as number[]).slice(-KEEP);
  } catch {
    // Not JSON: learned again from the next tasks.
  }
  return [];
}
