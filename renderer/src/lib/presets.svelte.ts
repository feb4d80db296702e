import type { Preset } from '../../../shared/contract/index.ts';
import { call, errorText } from './bridge.ts';
import { handOver } from './hand-over.ts';

/** The saved presets, shared by the Studio's picker and Compare; read again after each change. */
class PresetsState {
  all = $state<Preset[]>([]);
  /** Why the presets could not be read, for the person; null when they could. */
  problem = $state<string | null>(null);

  async load(): Promise<void> {
    try {
      this.all = (await call('presets.list', {})).presets;
      this.problem = null;
    } catch (err) {
      this.problem = errorText(err);
    }
  }

  of(tool: string): Preset[] {
    return this.all.filter((p) => p.tool === tool);
  }

  async save(name: string, tool: string, params: Record<string, unknown>): Promise<Preset> {
    const saved = await call('presets.save', { name, tool, params });
    await this.load();
    return saved;
  }

  async remove(name: string): Promise<void> {
    await call('presets.remove', { name });
    await this.load();
  }

  /** Every preset to a JSON file; in the browser it is downloaded. Answers what to say. */
  async export(): Promise<string> {
    const r = await call('presets.export', {});
    const what = `${r.count} preset${r.count === 1 ? '' : 's'}`;
    return handOver(r.path, `Saved ${what} to ${r.path}`, what);
  }

  /** A chosen JSON file's presets added; answers what was added and what was refused, and why. */
  async import(file: File): Promise<string> {
    const r = await call('presets.import', { text: await file.text(), name: file.name });
    await this.load();
    const added = r.added.length ? `Added ${r.added.map((p) => `“${p.name}”`).join(', ')}.` : 'No presets added.';
    const refused = r.refused.map((x) => `“${x.name}” not added: ${x.reason}.`);
    return [added, ...refused].join(' ');
  }
}

export const presets = new PresetsState();
