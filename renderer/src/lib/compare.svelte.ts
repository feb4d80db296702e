import { getTool, withDefaults } from '../../../shared/catalogue/index.ts';
import type { JobRecord } from '../../../shared/contract/index.ts';
import { SETTLED_STATES } from '../../../shared/contract/job-states.ts';
import { presetParams } from '../../../shared/presets.ts';
import { otherResultsFolder } from '../../../shared/results-folder.ts';
import { portableName } from '../../../shared/file-names.ts';
import { call, errorText } from './bridge.ts';
import { baseName, dirName, joinPath } from './paths.ts';
import { presets } from './presets.svelte.ts';
import { studio } from './studio.svelte.ts';
import { STUDIO_TOOLS } from './tool-lists.ts';

/** The tools a variant may use: the Studio's tools that take one image. */
export const COMPARE_TOOLS = STUDIO_TOOLS.filter((t) => t.batchField && t.result === 'image' && !t.generated);

/** One way to make the image: a tool with its Studio settings (`preset` empty) or with a saved preset. */
export interface Variant {
  key: number;
  tool: string;
  preset: string;
}

/** A variant once run: its own one-image batch and that batch's job, followed to its end. */
export interface VariantRun {
  label: string;
  tool: string;
  params: Record<string, unknown>;
  batchId: string | null;
  job: JobRecord | null;
  /** Why it could not be started or did not make a result, for the person. */
  problem: string | null;
}

export const variantLabel = (v: { tool: string; preset: string }) =>
  `${getTool(v.tool).title} · ${v.preset || 'Studio settings'}`;

/** The settings a variant sends: its preset's, else the tool's settings in the Studio, without the input. */
export function variantParams(v: { tool: string; preset: string }): Record<string, unknown> {
  const tool = getTool(v.tool);
  const preset = v.preset ? presets.all.find((p) => p.tool === v.tool && p.name === v.preset) : undefined;
  const params = preset ? withDefaults(tool, preset.params) : $state.snapshot(studio.valuesOf(v.tool));
  return presetParams(tool, params as Record<string, unknown>);
}

let nextKey = 1;

/** The Compare screen's image, variants and last run; kept across screens, as the Studio's are. */
class CompareState {
  image = $state('');
  variants = $state<Variant[]>([
    { key: nextKey++, tool: COMPARE_TOOLS[0].id, preset: '' },
    { key: nextKey++, tool: COMPARE_TOOLS[1]?.id ?? COMPARE_TOOLS[0].id, preset: '' },
  ]);
  runs = $state<VariantRun[]>([]);
  /** The image of the last run (the Before of each result). */
  ranImage = $state('');
  /** The copy a browser made of the image chosen (its own folder is not known); '' when none. */
  uploadedImage = $state('');
  /** That file's own name, as the person chose it (the copy's folder is the host's, its id meaningless). */
  uploadedName = $state('');
  /** The folder "Apply to folder…" last filled the Studio with. */
  private appliedFolder = '';
  running = $state(false);
  error = $state('');
  private timer: ReturnType<typeof setTimeout> | null = null;

  add(): void {
    this.variants.push({ key: nextKey++, tool: this.variants.at(-1)?.tool ?? COMPARE_TOOLS[0].id, preset: '' });
  }

  removeVariant(key: number): void {
    this.variants = this.variants.filter((v) => v.key !== key);
  }

  /** Each variant as one small batch of the one image, its results in Compare/<image> <time>/<variant>. */
  async run(outputRoot: string): Promise<void> {
    const image = this.image.trim();
    this.error = '';
    if (!image) {
      this.error = 'Choose an image first.';
      return;
    }
    this.running = true;
    this.ranImage = image;
    const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
    const folder = joinPath(
      otherResultsFolder(outputRoot, 'compare'),
      portableName(`${baseName(image)} ${stamp}`, 'Image'),
    );
    this.runs = this.variants.map((v) => ({
      label: variantLabel(v),
      tool: v.tool,
      params: variantParams(v),
      batchId: null,
      job: null,
      problem: null,
    }));
    await Promise.all(
      this.runs.map(async (r, i) => {
        try {
          const started = await call('batches.start', {
            tool: r.tool,
            inputs: [image],
            params: r.params,
            outDir: joinPath(folder, portableName(`${i + 1} ${r.label}`, 'Variant')),
          });
          r.batchId = started.batch?.id ?? null;
          const refused = [...started.rejected, ...started.skipped][0];
          if (!r.batchId) r.problem = refused ? refused.reason : 'Nothing was started.';
        } catch (err) {
          r.problem = errorText(err);
        }
      }),
    );
    await this.follow();
  }

  /** Reads each started variant's job until every one has ended. */
  private async follow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    for (const r of this.runs) {
      if (!r.batchId || (r.job && SETTLED_STATES.includes(r.job.state))) continue;
      try {
        r.job = (await call('jobs.list', { batchId: r.batchId, limit: 1 })).jobs[0] ?? null;
        if (r.job && r.job.state !== 'done' && SETTLED_STATES.includes(r.job.state))
          r.problem = r.job.error ?? `The job ended ${r.job.state.replace('_', ' ')}.`;
      } catch (err) {
        r.problem = errorText(err);
      }
    }
    const waiting = this.runs.some((r) => r.batchId && !r.problem && !(r.job && SETTLED_STATES.includes(r.job.state)));
    this.running = waiting;
    if (waiting) this.timer = setTimeout(() => void this.follow(), 800);
  }

  /** Whether the last run's image is a copy the browser uploaded, not a file in the person's own folder. */
  get ranUploaded(): boolean {
    return !!this.ranImage && this.ranImage === this.uploadedImage;
  }

  /** The folder to offer first: the image's own, else the one applied last, else one typed into the Studio. */
  suggestedFolder(): string {
    if (this.ranImage && !this.ranUploaded) return dirName(this.ranImage);
    return this.appliedFolder || (studio.inputs.find((i) => i.files.length === 0)?.path ?? '');
  }

  /** "Apply to folder…": the Studio gets the variant's tool and settings and the folder (the image's own unless given). */
  apply(run: VariantRun, folder = dirName(this.ranImage)): void {
    this.appliedFolder = folder;
    studio.load(run.tool, run.params, [{ path: folder, label: baseName(folder), files: [] }], '');
  }
}

export const compare = new CompareState();
