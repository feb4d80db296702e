import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { DeskError, type HandlerMap } from '../../../shared/contract/define.ts';
import type { presetsCommands } from '../../../shared/contract/presets.ts';
import type { PresetStore } from './store.ts';

/** The presets' commands; `exportDir` is where an export goes without a path (the Exports folder). */
export function presetHandlers(store: PresetStore, exportDir: () => string): HandlerMap<typeof presetsCommands> {
  return {
    'presets.list': ({ tool }) => ({ presets: store.list(tool) }),
    'presets.save': (req) => store.save(req),
    'presets.remove': async ({ name }) => {
      await store.remove(name);
      return { ok: true as const };
    },
    'presets.export': async ({ names, path }) => {
      const { text, count } = store.exportText(names);
      const stamp = new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-');
      const target = path ? resolve(path) : join(exportDir(), `MediaDesk presets ${stamp}.json`);
      await mkdir(resolve(target, '..'), { recursive: true });
      await writeFile(target, text, 'utf8');
      return { path: target, count };
    },
    'presets.import': async ({ path, text }) => {
      if (text !== undefined) return store.importText(text, 'The file');
      const file = resolve(path!);
      const content = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        throw new DeskError('invalid', `${file} cannot be read (${err.code ?? err.message})`);
      });
      return store.importText(content, basename(file));
    },
  };
}
