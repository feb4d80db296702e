import { shownPath } from '../../../shared/uploaded.ts';
import { isLocalPath, placeholderFor, validateRequest, type ToolEntry } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { familyOfTool } from '../../../shared/catalogue/index.ts';
import { FAMILY_LIMITS, type FamilyLimits } from '../../../shared/validation/limits.ts';
import { checkReferences, framesOf, isProbeable, named, type NamedSource } from '../media/check.ts';
import { sniffAudio } from '../../media/probe.ts';
import { batchFieldOf, localFileProblem, localMediaFields, withPlaceholders } from './request.ts';

type FieldProblem = { field: string; reason: string };

/**
 * The parameters as the server would judge them (validateRequest), with the batch field filled per
 * input when `withInputs`, and what only this machine can check (local files, references), refused
 * as `invalid` before anything is walked or paid for. Start and batches.check both run it.
 */
export async function assertParams(
  tool: ToolEntry,
  params: Record<string, unknown>,
  withInputs: boolean,
): Promise<void> {
  if (tool.unusable) throw new DeskError('invalid', `${tool.title} cannot be run from MediaDesk: ${tool.unusable}`);
  const field = batchFieldOf(tool);
  if (field && params[field.name] !== undefined && withInputs)
    throw new DeskError('invalid', `${field.name} is filled from the input files; do not also pass it as a parameter`);
  // Local paths in media fields (reference lists, keyframes) are encoded at submission; validate with stand-ins.
  const stood = withPlaceholders(tool, params);
  const probe =
    field && withInputs
      ? { ...stood, [field.name]: field.kind === 'mediaList' ? [placeholderFor(field)] : placeholderFor(field) }
      : stood;
  const validation = validateRequest(tool, probe);
  if (!validation.ok)
    throw new DeskError(
      'invalid',
      `${tool.title}: ${validation.invalid.map((p) => `${p.field} ${p.reason}`).join('; ')}`,
      validation.invalid,
    );
  const problems = localMediaFields(tool, params)
    .map((f) => ({ field: f.name, reason: localFileProblem(tool, f) }))
    .filter((p): p is FieldProblem => p.reason !== null);
  if (problems.length) throw new DeskError('invalid', problems.map((p) => p.reason).join('; '), problems);
  await enforceReferences(tool, params, field && withInputs ? [field.name] : []);
}

/**
 * The reference rules (duration, fps, size, pixels, aspect, counts, mentions) on the files and URLs
 * the request cites, probed before anything is uploaded or paid for. The renderer runs the same
 * shared rules for instant feedback; this is the enforcement.
 */
async function enforceReferences(
  tool: ToolEntry,
  params: Record<string, unknown>,
  filledLater: readonly string[],
): Promise<void> {
  const family = familyOfTool(tool.id);
  if (!family) return;
  const limits = FAMILY_LIMITS[family];
  const fields = [limits.videos?.field, limits.images?.field].filter((f): f is string => !!f && f !== tool.batchField);
  // Uploaded ids cannot be probed here; the server checks those. Inline data is decoded and probed.
  const sources: (NamedSource & { field: string })[] = [];
  for (const f of fields) {
    listOf(params[f]).forEach((value, i) => {
      if (isProbeable(value))
        sources.push({ field: f, ...named(value, Array.isArray(params[f]) ? `${f} ${i + 1}` : f) });
    });
  }
  const invalid = await audioProblems(tool, params);
  // Frames (image, image_end) given as a URL, a path or inline data are probed from the body by checkReferences.
  const report =
    sources.length || framesOf(family, params).length
      ? await checkReferences({ family, sources, body: params, filledLater })
      : null;
  if (report && !report.ok) {
    invalid.push(
      ...report.references.flatMap((r, i) => r.errors.map((e) => ({ field: sources[i].field, reason: e.message }))),
      ...report.frames.flatMap((f) => f.errors.map((e) => ({ field: f.field, reason: e.message }))),
      ...report.errors
        .filter((e) => !report.references.some((r) => r.errors.some((x) => x.message === e.message)))
        .map((e) => ({
          field: fieldOfRule(e.rule, limits),
          reason: e.message,
        })),
    );
  }
  if (!invalid.length) return;
  throw new DeskError('invalid', `${tool.title}: ${invalid.map((p) => p.reason).join('; ')}`, invalid);
}

/** Local audio references whose content is not what the tool takes (the shared rules only see names). */
async function audioProblems(tool: ToolEntry, params: Record<string, unknown>): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  for (const f of tool.fields) {
    if (f.kind !== 'mediaList' || f.media !== 'audio') continue;
    for (const value of listOf(params[f.name])) {
      if (typeof value !== 'string' || !isLocalPath(value)) continue;
      const sniffed = await sniffAudio(value).catch((err: unknown) => ({
        ok: false as const,
        found: `unreadable (${err instanceof Error ? err.message : String(err)})`,
      }));
      if (!sniffed.ok)
        problems.push({
          field: f.name,
          reason: `${shownPath(value)}: not an MP3 or WAV file (its content is ${sniffed.found})`,
        });
    }
  }
  return problems;
}

/** A field that takes one value or a list, as a list. */
function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  return value === undefined ? [] : [value];
}

/** The request field a reference rule's error is shown on. */
function fieldOfRule(rule: string, limits: FamilyLimits): string {
  if (rule.endsWith('.mention')) return 'prompt';
  if (rule.startsWith('video.')) return limits.videos?.field ?? 'references';
  if (rule.startsWith('image.')) return limits.images?.field ?? 'references';
  return rule.startsWith('audio.') ? 'reference_audios' : 'prompt';
}
