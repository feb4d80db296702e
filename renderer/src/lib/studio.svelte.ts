import { defaultsOf, getTool, TOOLS, withDefaults } from '../../../shared/catalogue/index.ts';
import type { BatchStartResult } from '../../../shared/contract/index.ts';
import { slotOf } from './loras.svelte.ts';
import { InputCheck } from './input-check.svelte.ts';
import { STUDIO_TOOLS } from './tool-lists.ts';

export { STUDIO_TOOLS } from './tool-lists.ts';

export interface Picked {
  file: File;
  relPath: string;
}

/** Where the Studio keeps its tool, form values, inputs and output folder across a reload of the window. */
const SAVED_KEY = 'mediadesk.studio';
/** Apart from the choices: a folder's file list is written again only when the inputs change, not on each keystroke. */
const SAVED_INPUTS_KEY = 'mediadesk.studio.inputs';

interface SavedStudio {
  toolId: string;
  values: Record<string, Record<string, unknown>>;
  inputs: StudioInput[];
  outDir: string;
}

export interface StudioInput {
  /** Absolute path (file or folder) handed to batches.start. */
  path: string;
  /** What the user sees: file or folder name and how many files it holds. */
  label: string;
  /** Files inside (for thumbnails); empty when unknown (a typed folder path). */
  files: string[];
}

/**
 * The Studio's state lives outside the screen so it survives navigation, and so the LoRA gallery
 * and "run again" in Results can fill the form before switching to it.
 */
class StudioStore {
  toolId = $state(STUDIO_TOOLS[0].id);
  /** Form values per tool: switching tools and back keeps what was typed. */
  // Filled for every tool up front: reading a form must never write state (derived reads do).
  values = $state<Record<string, Record<string, unknown>>>(
    Object.fromEntries([...TOOLS, ...STUDIO_TOOLS].map((t) => [t.id, defaultsOf(t)])),
  );
  inputs = $state<StudioInput[]>([]);
  outDir = $state('');
  /**
   * The last Start's answer and its tool: the progress panel and the skipped/rejected list must
   * still be there after a look at the Queue, not only until the screen is left.
   */
  lastStart = $state<{ result: BatchStartResult; tool: string } | null>(null);
  /** What a Start would do with the inputs, checked as they are chosen; kept across screens, as they are. */
  readonly check = new InputCheck();

  /** What a hand-off from outside the window (Open with, a link) did not take, and why; '' when all was taken. */
  handedNote = $state('');

  /** Inputs brought back from the last session: taken out once the input check finds them gone. */
  restoredInputs = new Set<string>();

  tool = $derived(getTool(this.toolId));

  /** Brings back what the last window had; a tool or value this build no longer has is left out. */
  restore(): void {
    const stored = readSaved(SAVED_KEY);
    const saved = (stored && typeof stored === 'object' ? { ...stored } : {}) as Partial<SavedStudio>;
    const inputs = readSaved(SAVED_INPUTS_KEY);
    if (inputs !== undefined) saved.inputs = inputs as StudioInput[];
    if (typeof saved.toolId === 'string' && STUDIO_TOOLS.some((t) => t.id === saved.toolId)) this.toolId = saved.toolId;
    for (const [id, v] of Object.entries(saved.values ?? {}))
      if (STUDIO_TOOLS.some((t) => t.id === id) && v && typeof v === 'object')
        this.values[id] = withDefaults(
          getTool(id),
          Object.fromEntries(Object.entries(v).filter(([k]) => getTool(id).fields.some((f) => f.name === k))),
        );
    if (Array.isArray(saved.inputs)) {
      const inputs = saved.inputs.filter(
        (i) => typeof i?.path === 'string' && typeof i.label === 'string' && Array.isArray(i.files),
      );
      this.inputs = inputs;
      this.restoredInputs = new Set(inputs.map((i) => i.path));
    }
    if (typeof saved.outDir === 'string') this.outDir = saved.outDir;
  }

  /** Saves the Studio's choices as they change (the Studio's tools only: the other screens keep their own). */
  persist(): void {
    $effect.root(() => {
      $effect(() =>
        save(SAVED_KEY, {
          toolId: this.toolId,
          values: Object.fromEntries(STUDIO_TOOLS.map((t) => [t.id, $state.snapshot(this.values[t.id])])),
          outDir: this.outDir,
        }),
      );
      $effect(() => save(SAVED_INPUTS_KEY, $state.snapshot(this.inputs)));
    });
  }

  valuesOf(toolId: string): Record<string, unknown> {
    return this.values[toolId];
  }

  /** "Run again": the same tool, settings and inputs; a fresh output folder so nothing is skipped. */
  load(toolId: string, params: Record<string, unknown>, inputs: StudioInput[], outDir: string) {
    this.toolId = toolId;
    this.values[toolId] = withDefaults(getTool(toolId), structuredClone($state.snapshot(params)));
    this.inputs = inputs;
    this.outDir = outDir;
  }

  /**
   * "Use" in the LoRA gallery: the generator with this LoRA as its style or character. False (and
   * nothing changed) for a type the request has no slot for.
   */
  useLora(l: { id: number; name: string; type: string; training?: { defaultScale?: number } }): boolean {
    const slot = slotOf(l.type);
    if (!slot) return false;
    const tool = 'hires';
    const v = { ...this.valuesOf(tool) };
    const styling = { ...((v.styling as Record<string, unknown> | undefined) ?? {}) };
    // Strength is 0..200 (percent); the catalogue gives scales as 0..2 factors.
    const strength = Math.round((l.training?.defaultScale ?? 1) * 100);
    if (slot === 'style') styling.styles = [{ name: l.name, strength }];
    else styling.characters = [{ id: String(l.id), strength }];
    v.styling = styling;
    this.values[tool] = v;
    this.toolId = tool;
    return true;
  }
}

function readSaved(key: string): unknown {
  try {
    return JSON.parse(localStorage.getItem(key) ?? 'null') ?? undefined;
  } catch {
    return undefined;
  }
}

function save(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or off: the Studio still works, it only forgets on reload.
  }
}

export const studio = new StudioStore();
if (typeof localStorage !== 'undefined') {
  studio.restore();
  studio.persist();
}
