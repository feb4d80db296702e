import { createCore, type Core } from '../../core/index.ts';
import { dbPaths } from '../../core/paths.ts';
import { startBuiltInSandbox } from '../../sandbox/built-in.ts';
import type { ApiTarget } from '../../core/api/client.ts';
import type { Slugs } from '../../../shared/catalogue/index.ts';
import type { CliContext } from './command.ts';
import type { Settings } from '../../../shared/settings.ts';

export interface CliServices {
  core: Core;
  settings: Core['settings'];
  /** Where requests go: MEDIADESK_API_URL + MEDIADESK_API_KEY, else the keychain's live key, else an in-process Sandbox. */
  target(): Promise<ApiTarget>;
  slugs(): Slugs;
  /** Backend.identity(): which server batches started here are for. */
  identity(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The same core services as the desktop app, over the same data folder. Its engine is the CLI's one
 * engine: `queueSettings` (the command's flags) apply to the queue alone; commands start it themselves.
 */
export async function openCliServices(ctx: CliContext, queueSettings?: Partial<Settings>): Promise<CliServices> {
  const core = await createCore({
    home: ctx.home,
    host: 'cli',
    env: ctx.env,
    runQueue: false,
    queueSettings,
    startSandbox: () => startBuiltInSandbox(dbPaths(ctx.home).sandboxTasks),
  });
  // The command's words only: its arguments may name private files.
  const subcommand = /^[a-z][a-z-]*$/.test(ctx.argv[0] ?? '') ? ` ${ctx.argv[0]}` : '';
  core.log.info(`cli: mediadesk ${ctx.command ?? '?'}${subcommand}`);
  return {
    core,
    settings: core.settings,
    target: () => core.backend.target(),
    slugs: () => core.backend.slugs(),
    identity: () => core.backend.identity(),
    close: () => core.close(),
  };
}
