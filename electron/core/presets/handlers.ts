import { mkdir, writeFile } from 'node:fs/promises';
import type { HandlerMap } from '../../../shared/contract/define.ts';
import { freePath } from '../saved-files.ts';
import type { presetsCommands } from '../../../shared/contract/presets.ts';
import type { PresetStore } from './store.ts';

/** The presets' commands; `exportDir` is where an export goes (SAVED_FILES_RULE). */
export function presetHandlers(store: PresetStore, exportDir: () => string): HandlerMap<typeof presetsCommands> {
  return {
    'presets.list': ({ tool }) => ({ presets: store.list(tool) }),
    'presets.save': (req) => store.save(req),
    'presets.remove': async ({ name }) => {
      await store.remove(name);
      return { ok: true as const };
    },
    'presets.export': async ({ names }) => {
      const { text, count } = store.exportText(names);
      const stamp = new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-');
      await mkdir(exportDir(), { recursive: true });
      const target = freePath(exportDir(), `MediaDesk presets ${stamp}.json`);
      await writeFile(target, text, { encoding: 'utf8', flag: 'wx' });
      return { path: target, count };
    },
    'presets.import': ({ text, name }) => store.importText(text, name ?? 'The file'),
  };
}
