import { call } from './bridge.ts';

/**
 * The backend in use (app.info's backend.identity), shared by the screens that say what queued
 * work waits for (Queue, app runs, Settings). Each refreshes it when it opens or switches.
 */
class BackendInUse {
  value = $state<string | null>(null);

  async refresh(): Promise<string | null> {
    try {
      this.value = (await call('app.info', {})).backend.identity;
    } catch {
      // Unknown: nothing is said to wait.
    }
    return this.value;
  }
}

export const backendInUse = new BackendInUse();
