import { join } from 'node:path';
import type { Slugs } from '../../../shared/catalogue/index.ts';
import type { Settings } from '../../../shared/settings.ts';
import type { ApiTarget } from '../api/client.ts';
import { openDatabase } from '../db/open.ts';
import { dbPaths } from '../paths.ts';
import { QUEUE_MIGRATIONS } from '../queue/migrations.ts';
import { Engine, type EngineOptions } from './engine.ts';

export interface OpenEngineOptions extends Omit<EngineOptions, 'db'> {
  home: string;
}

/** The engine over the shared queue database of a data folder (desktop app and CLI alike). */
export function openEngine(options: OpenEngineOptions): Engine & { close(): Promise<void> } {
  const db = openDatabase(dbPaths(options.home).jobs, QUEUE_MIGRATIONS);
  const engine = new Engine({ inbox: join(options.home, 'inbox'), ...options, db }) as Engine & {
    close(): Promise<void>;
  };
  engine.close = async () => {
    await engine.stop();
    db.close();
  };
  return engine;
}

export type { ApiTarget, Settings, Slugs };
