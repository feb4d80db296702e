/**
 * Probes reference sources and frames and applies the shared reference rules (the engine's check
 * before submission, the CLI's `video check`). Inline data is named by where it sits, never by its
 * base64; rules spanning several sources go in the top-level errors.
 */
import type { Family } from '../../../shared/catalogue/families.ts';
import {
  checkImage,
  frameFields,
  validateReferences,
  type Probe,
  type ProbeSummary,
  type RuleId,
} from '../../../shared/validation/references.ts';
import { ProbeError, probeSource } from '../../media/probe.ts';
import { mapLimit } from '../../../shared/concurrency.ts';
import { shownPath } from '../../../shared/uploaded.ts';
import { isInline, isLocalPath } from '../../../shared/catalogue/index.ts';

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

/** A start or end frame of the body, probed as a reference image is. */
export interface FrameReport extends ReferenceReport {
  field: string;
}

export interface CheckReport {
  ok: boolean;
  family: Family;
  references: ReferenceReport[];
  frames: FrameReport[];
  errors: ReportIssue[];
  warnings: ReportIssue[];
}

/** Probing is I/O bound and references are few; a small limit keeps remote servers polite. */
const CONCURRENCY = 3;

const round = (n: number | null, digits: number) => (n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits);
const summary = (p: Probe): ReportProbe => ({
  container: p.container,
  durationSec: round(p.durationSec, 3),
  fps: round(p.fps, 3),
  width: p.width,
  height: p.height,
  bytes: p.bytes,
});

/**
 * A value this machine can measure: a local path, an http(s) URL, or inline data (base64, a data:
 * URI) decoded here; not an upload id, whose bytes only the server has.
 */
export const isProbeable = (v: unknown): v is string =>
  typeof v === 'string' && (/^https?:\/\//i.test(v) || isLocalPath(v) || isInline(v));

/** A source to probe, and what messages call it: a URL or path as given, inline data by where it sits. */
export interface NamedSource {
  source: string;
  name: string;
}

/** `where` names the place of inline data in the request ('image', 'reference_images 2'); a browser upload by its name; anything else as given. */
export const named = (source: string, where: string): NamedSource => ({
  source,
  name: isInline(source) ? `${where} (inline data)` : shownPath(source),
});

/** The frames of a body (start and end frame) that can be probed here: URLs, local paths, inline data. */
export function framesOf(family: Family, body: Record<string, unknown> = {}): (NamedSource & { field: string })[] {
  return frameFields(family).flatMap((field) =>
    isProbeable(body[field]) ? [{ field, ...named(body[field] as string, field) }] : [],
  );
}

async function probeAll(sources: readonly NamedSource[]) {
  return mapLimit(sources, CONCURRENCY, async ({ source, name }) => {
    try {
      return { source: name, probe: await probeSource(source, name) };
    } catch (err) {
      const message =
        err instanceof ProbeError ? err.message : `${name}: ${err instanceof Error ? err.message : String(err)}`;
      return { source: name, error: { rule: 'probe' as const, message } };
    }
  });
}

/** Each frame given as a URL, a local path or inline data, probed and held to its field's image rules. */
async function checkFrames(family: Family, body: Record<string, unknown> | undefined): Promise<FrameReport[]> {
  const frames = framesOf(family, body);
  const probed = await probeAll(frames);
  return probed.map((p, i) => {
    const errors: ReportIssue[] = p.error
      ? [p.error]
      : checkImage(p.probe, family, { field: frames[i].field }).map((e) => ({ rule: e.rule, message: e.message }));
    return {
      field: frames[i].field,
      source: p.source,
      ok: errors.length === 0,
      probe: p.probe ? summary(p.probe) : null,
      errors,
    };
  });
}

/** `sources`: as given (inline data among them named by its place in the list), or named by the caller. */
export async function checkReferences(opts: {
  family: Family;
  sources: readonly (string | NamedSource)[];
  body?: Record<string, unknown>;
  /** Fields each input fills later (a batch's start frame): present for the rules, not probed here. */
  filledLater?: readonly string[];
}): Promise<CheckReport> {
  const sources = opts.sources.map((s, i) => (typeof s === 'string' ? named(s, `reference ${i + 1}`) : s));
  const [probed, frames] = await Promise.all([probeAll(sources), checkFrames(opts.family, opts.body)]);
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
  const ruleBody = opts.filledLater?.length
    ? { ...opts.body, ...Object.fromEntries(opts.filledLater.map((f) => [f, true])) }
    : opts.body;
  const result = validateReferences({ family: opts.family, references: good, body: ruleBody });
  const references: ReferenceReport[] = probed.map((p) => ({
    source: p.source,
    ok: !p.error,
    probe: p.probe ? summary(p.probe) : null,
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
  return {
    ok: errors.length === 0 && references.every((r) => r.ok) && frames.every((f) => f.ok),
    family: opts.family,
    references,
    frames,
    errors,
    warnings,
  };
}
