import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

const storedSchema = z.object({ mediadeskPresets: z.literal(PRESET_FILE_VERSION), presets: z.array(presetSchema) });

/**
 * The saved presets: `presets.json` in the data folder, in the same shape as an export. Each
 * change reads the file, checks it and replaces it whole (write then rename); a file that cannot
 * be read is left as it is and every change refused, so nothing stored is lost.
 */
export class PresetStore {
  readonly path: string;

  constructor(home: string) {
    this.path = join(home, PRESETS_FILE);
  }

  list(tool?: string): Preset[] {
    const all = this.read();
    return (tool ? all.filter((p) => p.tool === tool) : all).sort((a, b) => a.name.localeCompare(b.name));
  }

  find(name: string): Preset | undefined {
    return this.read().find((p) => sameName(p.name, name));
  }

  save(req: { name: string; tool: string; params: Record<string, unknown>; replace?: boolean }): Preset {
    const nameProblem = presetNameProblem(req.name);
    if (nameProblem) throw new DeskError('invalid', nameProblem, [{ field: 'name', reason: nameProblem }]);
    const tool = findTool(req.tool);
    if (!tool) throw new DeskError('invalid', `no tool "${req.tool}"`);
    const params = presetParams(tool, req.params);
    const problem = presetProblem(tool.id, params);
    if (problem) throw new DeskError('invalid', `${req.name.trim()}: ${problem}`);
    const all = this.read();
    const taken = all.find((p) => sameName(p.name, req.name));
    if (taken && !req.replace)
      throw new DeskError('conflict', `a preset named "${taken.name}" exists already; choose another name`);
    const preset: Preset = { name: req.name.trim(), tool: tool.id, params, savedAt: Date.now() };
    this.write([...all.filter((p) => p !== taken), preset]);
    return preset;
  }

  remove(name: string): void {
    const all = this.read();
    const found = all.find((p) => sameName(p.name, name));
    if (!found) throw new DeskError('not_found', `no preset named "${name}"`);
    this.write(all.filter((p) => p !== found));
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
  importText(text: string, source: string) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new DeskError('invalid', `${source} is not valid JSON (${(err as Error).message})`);
    }
    const file = presetFileSchema.safeParse(json);
    if (!file.success) throw new DeskError('invalid', `${source} is not a MediaDesk presets file`);
    const all = this.read();
    const added: Preset[] = [];
    const refused: { name: string; reason: string }[] = [];
    file.data.presets.forEach((entry, i) => {
      const r = readImportedPreset(entry, i);
      if (!r.ok) return refused.push({ name: r.name, reason: r.reason });
      if ([...all, ...added].some((p) => sameName(p.name, r.preset.name)))
        return refused.push({ name: r.preset.name, reason: 'a preset of that name exists already' });
      added.push({ ...r.preset, savedAt: Date.now() });
    });
    if (added.length) this.write([...all, ...added]);
    return { added, refused };
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

  private write(presets: Preset[]): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const part = `${this.path}.${process.pid}.part`;
    writeFileSync(part, `${JSON.stringify({ mediadeskPresets: PRESET_FILE_VERSION, presets }, null, 2)}\n`);
    renameSync(part, this.path);
  }
}
