import type { SecretStore } from '../secrets.ts';
import type { AppLog } from './index.ts';

/** The key store as it is, telling the log each key it reads or stores so no line can hold it. */
export function keysKnownTo(log: AppLog, store: SecretStore): SecretStore {
  return {
    kind: store.kind,
    note: store.note,
    problem: store.problem,
    async get() {
      const key = await store.get();
      log.addSecret(key);
      return key;
    },
    async set(value) {
      log.addSecret(value);
      await store.set(value);
    },
    clear: () => store.clear(),
  };
}
