import type { AppRun } from '../../../shared/contract/team.ts';
import { call, on } from './bridge.ts';

/**
 * Workflow-app runs, live, shared by the Apps screen and the Queue: one subscription to
 * `apps.changed`, whichever screen opens first.
 */
class AppRunsStore {
  runs = $state<AppRun[]>([]);
  private started = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    call('apps.runs', { limit: 100 })
      .then((r) => r.runs.forEach((x) => this.upsert(x)))
      .catch(() => {});
    on('apps.changed', (e) => e.runs.forEach((x) => this.upsert(x)));
  }

  upsert(r: AppRun): void {
    this.runs = [r, ...this.runs.filter((x) => x.id !== r.id)].sort((a, b) => b.createdAt - a.createdAt);
  }
}

export const appRuns = new AppRunsStore();
