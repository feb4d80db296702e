import { encodingOf, isInline, isLocalPath, type Field, type InvalidParam } from '../../../shared/catalogue/index.ts';
import { frameFields } from '../../../shared/validation/references.ts';
import type { Announcer } from './announcer.svelte.ts';
import { call, errorText } from './bridge.ts';
import { localPaths, notLocal } from './video-references.ts';
import { video } from './video.svelte.ts';

/**
 * The builder's start and end frames given as a URL, inline data or a picked file, probed in the
 * core as reference images are. Runs an effect: create it while a component initialises.
 */
export class FrameChecks {
  /** What the core's probe refused, per frame field. */
  probeIssues = $state<InvalidParam[]>([]);
  probing = $state(false);
  /** Frames being copied to the host: Submit waits for them as for a probe. */
  picking = $state(0);
  /**
   * A picked frame that could not be had as a file the core reads (not copied to the host), on its
   * field while the field still holds what it held then (another pick, a URL or ✕ drops it).
   */
  private pickFailures = $state<(InvalidParam & { held: unknown })[]>([]);
  pickIssues = $derived(
    this.pickFailures
      .filter((p) => video.values[video.toolId][p.field] === p.held)
      .map(({ field, reason }) => ({ field, reason })),
  );
  /** Refused or not copied: each holds Submit, as a refused reference does. */
  issues = $derived([...this.probeIssues, ...this.pickIssues]);
  pending = $derived(this.probing || this.picking > 0);
  /**
   * The frames to probe as a stable key: a probe runs when one changes, not on every edit of the
   * form. Inline data is probed by its decoded content, as the engine probes it before anything is paid.
   */
  private key = $derived.by(() => {
    const values = video.values[video.toolId];
    return JSON.stringify(
      frameFields(video.family.check)
        .filter(
          (n) =>
            video.tool.fields.some((f) => f.name === n) &&
            typeof values[n] === 'string' &&
            (encodingOf(values[n] as string) === 'url' || isInline(values[n]) || isLocalPath(values[n])),
        )
        .map((n) => [n, values[n]]),
    );
  });
  private seq = 0;
  /** The frame problems said last: a problem is said once, when it comes. */
  private announced: string[] = [];

  constructor(announcer: Announcer) {
    $effect(() => {
      const frames = Object.fromEntries(JSON.parse(this.key) as [string, string][]);
      const fam = video.family.check;
      const seq = ++this.seq;
      const any = Object.keys(frames).length > 0;
      // Written, never read, here: reading them would make the effect rerun on its own results.
      this.probeIssues = [];
      this.probing = any;
      if (!any) return;
      // Typed URLs arrive a keystroke at a time: probe the one the user stopped at.
      const timer = setTimeout(async () => {
        let found: InvalidParam[];
        try {
          const report = await call('media.check', { family: fam, sources: [], body: frames });
          found = report.frames.flatMap((f) => f.errors.map((e) => ({ field: f.field, reason: e.message })));
        } catch (err) {
          found = Object.keys(frames).map((field) => ({ field, reason: `could not be probed: ${errorText(err)}` }));
        }
        if (seq !== this.seq) return;
        this.probeIssues = found;
        this.probing = false;
      }, 300);
      return () => clearTimeout(timer);
    });
    // Said as an alert when it comes, since it holds Submit.
    $effect(() => {
      const now = this.issues.map(
        (p) => `${video.tool.fields.find((f) => f.name === p.field)?.label ?? p.field}: ${p.reason}`,
      );
      const fresh = now.filter((m) => !this.announced.includes(m));
      this.announced = now;
      if (fresh.length) announcer.warn(fresh.join('. '));
    });
  }

  /**
   * A start or end frame picked as a file: held as its path, as a reference file is, so the core
   * probes its content (a GIF or a web page saved as .png is refused on its field) before Submit,
   * and the engine again before anything is paid for. The picker's type filter is only a hint.
   */
  async pick(f: Field, file: File): Promise<string | null> {
    this.pickFailures = this.pickFailures.filter((p) => p.field !== f.name);
    const held = video.values[video.toolId][f.name];
    this.picking++;
    try {
      const { paths, notCopied } = await localPaths([file]);
      if (!paths[0])
        this.pickFailures = [
          ...this.pickFailures,
          { field: f.name, reason: `${file.name}: ${notLocal(notCopied[0])}`, held },
        ];
      return paths[0];
    } catch (err) {
      this.pickFailures = [...this.pickFailures, { field: f.name, reason: `${file.name}: ${errorText(err)}`, held }];
      return null;
    } finally {
      this.picking--;
    }
  }

  clearPickFailures(): void {
    this.pickFailures = [];
  }
}
