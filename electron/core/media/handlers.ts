import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { mediaCommands } from '../../../shared/contract/media.ts';
import type { ApiClient } from '../api/client.ts';
import { listLoras } from '../loras.ts';
import { checkReferences } from './check.ts';

/** The media area's commands: reference checks before a run, and the LoRAs a tool may use (cached in `lorasCache`). */
export function mediaHandlers(client: ApiClient, lorasCache: string): HandlerMap<typeof mediaCommands> {
  return {
    'media.check': ({ family, sources, body }) => checkReferences({ family, sources, body }),
    'loras.list': async () => ({ loras: await listLoras(client, lorasCache) }),
  };
}
