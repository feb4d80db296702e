/**
 * Probes reference sources and applies the shared reference rules: the engine's enforcement
 * before submission and the CLI's `video check`.
 *
 *   checkReferences({ family, sources, body? }) -> Promise<CheckReport>
 *
 * Report: { ok, family, references: [{ source, ok, probe, errors }], errors, warnings }. A source
 * that cannot be probed gets probe: null and an error with rule 'probe'; rules that span several
 * sources (count, combined duration, mentions, keyframes, prompt) sit in the top-level errors.
 */
import { validateReferences, type Family, type Probe, type ProbeSummary, type RuleId } from '../../../shared/validation/references.ts';
import { ProbeError, probeSource } from './probe.ts';
import { mapLimit } from '../../../shared/concurrency.ts';

export interface ReportIssue {
  rule: RuleId;
  message: string;
}

export type ReportProbe = ProbeSummary;

export interface ReferenceReport {
  source: string;
  ok: boolean;
  probe: ReportProbe | null;
  errors: ReportIssue[];
}

export interface CheckReport {
  ok: boolean;
  family: Family;
  references: ReferenceReport[];
  errors: ReportIssue[];
  warnings: ReportIssue[];
}

/** Probing is I/O bound and references are few; a small limit keeps remote servers polite. */
const CONCURRENCY = 3;


const round = (n: number | null, digits: number) => (n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits);

export async function checkReferences(opts: { family: Family; sources: readonly string[]; body?: Record<string, unknown> }): Promise<CheckReport> {
  const probed = await mapLimit(opts.sources, CONCURRENCY, async (source) => {
    try {
      return { source, probe: await probeSource(source) };
    } catch (err) {
      const message = err instanceof ProbeError ? err.message : `${source}: ${err instanceof Error ? err.message : String(err)}`;
      return { source, error: { rule: 'probe' as const, message: `${message} (rule probe)` } };
    }
  });
  const good: Probe[] = [];
  const indexOf: number[] = [];
  probed.forEach((p, i) => {
    if (p.probe) {
      good.push(p.probe);
      indexOf.push(i);
    }
  });
  // A source that failed to probe already fails the report; whether it was meant as a video or an
  // image is unknown, so the cross-source rules (counts, mentions) see only the measured ones.
  const result = validateReferences({ family: opts.family, references: good, body: opts.body });
  const references: ReferenceReport[] = probed.map((p) => ({
    source: p.source,
    ok: !p.error,
    probe: p.probe
      ? { container: p.probe.container, durationSec: round(p.probe.durationSec, 3), fps: round(p.probe.fps, 3), width: p.probe.width, height: p.probe.height, bytes: p.probe.bytes }
      : null,
    errors: p.error ? [p.error] : [],
  }));
  const errors: ReportIssue[] = [];
  for (const e of result.errors) {
    if (e.index !== undefined) {
      const r = references[indexOf[e.index]];
      r.errors.push({ rule: e.rule, message: e.message });
      r.ok = false;
    } else {
      errors.push({ rule: e.rule, message: e.message });
    }
  }
  const warnings = result.warnings.map((w) => ({ rule: w.rule, message: w.message }));
  return { ok: errors.length === 0 && references.every((r) => r.ok), family: opts.family, references, errors, warnings };
}
