import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeJsonWhole } from '../write-whole.ts';
import { z } from 'zod';
import { DeskError } from '../../../shared/contract/define.ts';
import { presetSchema, type Preset } from '../../../shared/contract/presets.ts';
import { findTool } from '../../../shared/catalogue/index.ts';
import {
  PRESET_FILE_VERSION,
  presetFileSchema,
  presetNameProblem,
  presetParams,
  presetProblem,
  readImportedPreset,
  sameName,
} from '../../../shared/presets.ts';

export const PRESETS_FILE = 'presets.json';
/** How long a change waits for another process's change to finish before it gives up. */
const LOCK_WAIT_MS = 5000;
const LOCK_RETRY_MS = 25;
/** A lock not refreshed this long is a crashed holder's (the holder refreshes it every half of this). */
const LOCK_STALE_MS = 3000;

const storedSchema = z.object({ mediadeskPresets: z.literal(PRESET_FILE_VERSION), presets: z.array(presetSchema) });

/**
 * `presets.json` in the data folder, shaped as an export. Each change, under `presets.json.lock` (other
 * processes change it too), reads, checks and replaces it whole; a file it cannot read is left as it is.
 */
export class PresetStore {
  readonly path: string;
  private readonly lockWaitMs: number;

  constructor(home: string, opts: { lockWaitMs?: number } = {}) {
    this.path = join(home, PRESETS_FILE);
    this.lockWaitMs = opts.lockWaitMs ?? LOCK_WAIT_MS;
  }

  list(tool?: string): Preset[] {
    const all = this.read();
    return (tool ? all.filter((p) => p.tool === tool) : all).sort((a, b) => a.name.localeCompare(b.name));
  }

  find(name: string): Preset | undefined {
    return this.read().find((p) => sameName(p.name, name));
  }

  async save(req: { name: string; tool: string; params: Record<string, unknown>; replace?: boolean }): Promise<Preset> {
    const nameProblem = presetNameProblem(req.name);
    if (nameProblem) throw new DeskError('invalid', nameProblem, [{ field: 'name', reason: nameProblem }]);
    const tool = findTool(req.tool);
    if (!tool) throw new DeskError('invalid', `no tool "${req.tool}"`);
    const params = presetParams(tool, req.params);
    const problem = presetProblem(tool.id, params);
    if (problem) throw new DeskError('invalid', `${req.name.trim()}: ${problem}`);
    return this.change((all) => {
      const taken = all.find((p) => sameName(p.name, req.name));
      if (taken && !req.replace)
        throw new DeskError('conflict', `a preset named "${taken.name}" exists already; choose another name`);
      const preset: Preset = { name: req.name.trim(), tool: tool.id, params, savedAt: Date.now() };
      return { presets: [...all.filter((p) => p !== taken), preset], result: preset };
    });
  }

  async remove(name: string): Promise<void> {
    await this.change((all) => {
      const found = all.find((p) => sameName(p.name, name));
      if (!found) throw new DeskError('not_found', `no preset named "${name}"`);
      return { presets: all.filter((p) => p !== found), result: undefined };
    });
  }

  /** The file an export writes: every preset, or those named (each must exist). */
  exportText(names?: string[]): { text: string; count: number } {
    const all = this.list();
    const missing = (names ?? []).filter((n) => !all.some((p) => sameName(p.name, n)));
    if (missing.length) throw new DeskError('not_found', `no preset named ${missing.map((n) => `"${n}"`).join(', ')}`);
    const chosen = names ? all.filter((p) => names.some((n) => sameName(n, p.name))) : all;
    const presets = chosen.map(({ name, tool, params }) => ({ name, tool, params }));
    return {
      text: `${JSON.stringify({ mediadeskPresets: PRESET_FILE_VERSION, presets }, null, 2)}\n`,
      count: chosen.length,
    };
  }

  /** Adds each good preset of an exported file; a bad one, or a name taken, is refused by name and reason. */
  async importText(text: string, source: string) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new DeskError('invalid', `${source} is not valid JSON (${(err as Error).message})`);
    }
    const file = presetFileSchema.safeParse(json);
    if (!file.success) throw new DeskError('invalid', `${source} is not a MediaDesk presets file`);
    return this.change((all) => {
      const added: Preset[] = [];
      const refused: { name: string; reason: string }[] = [];
      file.data.presets.forEach((entry, i) => {
        const r = readImportedPreset(entry, i);
        if (!r.ok) return refused.push({ name: r.name, reason: r.reason });
        if ([...all, ...added].some((p) => sameName(p.name, r.preset.name)))
          return refused.push({ name: r.preset.name, reason: 'a preset of that name exists already' });
        added.push({ ...r.preset, savedAt: Date.now() });
      });
      return { presets: added.length ? [...all, ...added] : null, result: { added, refused } };
    });
  }

  /** Read, change and replace the file under its lock; `presets` null writes nothing. */
  private async change<T>(edit: (all: Preset[]) => { presets: Preset[] | null; result: T }): Promise<T> {
    mkdirSync(dirname(this.path), { recursive: true });
    let lost = false;
    // Loaded on first change: it brings signal-exit, whose SIGINT handler re-raises the signal and
    // so ended the CLI's Ctrl-C wind-down (exit 130) in commands that never change a preset.
    const { lock } = await import('proper-lockfile');
    const release = await lock(this.path, {
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: { retries: Math.ceil(this.lockWaitMs / LOCK_RETRY_MS), minTimeout: LOCK_RETRY_MS, factor: 1 },
      onCompromised: () => (lost = true),
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ELOCKED') throw err;
      throw new DeskError(
        'unavailable',
        `the presets were not changed: another MediaDesk (the app, a browser tab's host or a terminal command) is changing them and did not finish within ${+(this.lockWaitMs / 1000).toFixed(1)} seconds; try again`,
      );
    });
    try {
      const { presets, result } = edit(this.read());
      if (presets) this.write(presets, () => lost);
      return result;
    } finally {
      await release().catch(() => {});
    }
  }

  private read(): Preset[] {
    if (!existsSync(this.path)) return [];
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch (err) {
      throw new DeskError(
        'unavailable',
        `${this.path} cannot be read (${(err as Error).message}); it is left as it is`,
      );
    }
    const parsed = storedSchema.safeParse(json);
    if (!parsed.success)
      throw new DeskError('unavailable', `${this.path} is not a presets file this version reads; it is left as it is`);
    return parsed.data.presets;
  }

  private write(presets: Preset[], lockLost: () => boolean): void {
    writeJsonWhole(
      this.path,
      { mediadeskPresets: PRESET_FILE_VERSION, presets },
      {
        beforeRename: () => {
          if (lockLost())
            throw new DeskError(
              'unavailable',
              'the presets were not changed: their lock was lost while saving; try again',
            );
        },
      },
    );
  }
}
