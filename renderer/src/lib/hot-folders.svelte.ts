import type { HotFolderRecord, Req } from '../../../shared/contract/index.ts';
import { call, errorText } from './bridge.ts';

/** The hot folders as the core last listed them; the screen reloads them while it is shown. */
class HotFolderList {
  folders = $state<HotFolderRecord[]>([]);
  loaded = $state(false);
  failure = $state('');

  async load(): Promise<void> {
    try {
      this.folders = (await call('hotFolders.list', {})).folders;
      this.failure = '';
    } catch (err) {
      this.failure = errorText(err);
    } finally {
      this.loaded = true;
    }
  }

  async add(req: Req<'hotFolders.add'>): Promise<HotFolderRecord> {
    const added = await call('hotFolders.add', req);
    await this.load();
    return added;
  }

  async setSettle(id: string, settleSeconds: number): Promise<void> {
    await call('hotFolders.setSettle', { id, settleSeconds });
    await this.load();
  }

  async setShared(id: string, shared: boolean): Promise<void> {
    await call('hotFolders.setShared', { id, shared });
    await this.load();
  }

  async act(action: 'pause' | 'resume' | 'remove', id: string): Promise<void> {
    await call(`hotFolders.${action}`, { id });
    await this.load();
  }
}

export const hotFolders = new HotFolderList();
