import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { hotFoldersCommands } from '../../../shared/contract/hot-folders.ts';
import type { HotFolders } from './service.ts';

export function hotFolderHandlers(hotFolders: HotFolders): HandlerMap<typeof hotFoldersCommands> {
  return {
    'hotFolders.list': () => ({ folders: hotFolders.list() }),
    'hotFolders.add': (req) => hotFolders.add(req),
    'hotFolders.setSettle': ({ id, settleSeconds }) => hotFolders.setSettle(id, settleSeconds),
    'hotFolders.setShared': ({ id, shared }) => hotFolders.setShared(id, shared),
    'hotFolders.pause': ({ id }) => hotFolders.pause(id),
    'hotFolders.resume': ({ id }) => hotFolders.resume(id),
    'hotFolders.remove': ({ id }) => hotFolders.remove(id),
  };
}
