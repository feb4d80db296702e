import type { EventName } from '../../../shared/contract/index.ts';
import type { HotFolderRecord } from '../../../shared/contract/hot-folders.ts';
import type { BatchRecord, JobsChanged } from '../../../shared/contract/jobs.ts';
import type { AppRun } from '../../../shared/contract/team.ts';
import type { EventBus } from '../events.ts';
import { NoticeDecider, type ToldSet } from './decide.ts';

export interface NoticesDeps {
  events: EventBus;
  told: ToldSet;
  hotFolders: () => HotFolderRecord[];
  /** The `notifications` setting: when off, ends are still marked told, so turning it on tells nothing old. */
  enabled: () => boolean;
  /** The batches to start from (batches.list), for the progress of those already running. */
  batches: () => BatchRecord[];
  onProblem?: (message: string) => void;
}

/**
 * Turns the queue's and the apps' events into `notices.show` for every host (the desktop app's
 * notifications, the browser tab's), and keeps the progress of the batches that run.
 */
export class Notices {
  private readonly deps: NoticesDeps;
  private readonly decider: NoticeDecider;
  private readonly running = new Map<string, BatchRecord>();
  private readonly off: () => void;

  constructor(deps: NoticesDeps) {
    this.deps = deps;
    this.decider = new NoticeDecider(deps.told);
    for (const b of deps.batches()) if (!b.finished) this.running.set(b.id, b);
    this.off = deps.events.onAny((name, payload) => this.take(name, payload));
  }

  /** The batches not finished, as their last event told: the tray's and the taskbar's work (desktopWork). */
  unfinished(): BatchRecord[] {
    return [...this.running.values()];
  }

  stop(): void {
    this.off();
  }

  private take(name: EventName, payload: unknown): void {
    try {
      if (name === 'jobs.changed') {
        const e = payload as JobsChanged;
        for (const b of e.batches) {
          if (b.finished) this.running.delete(b.id);
          else this.running.set(b.id, b);
        }
        this.tell(this.decider.fromJobs(e, this.deps.hotFolders()));
      } else if (name === 'apps.changed') {
        this.tell(this.decider.fromApps((payload as { runs: AppRun[] }).runs));
      }
    } catch (err) {
      this.deps.onProblem?.(`notices: ${(err as Error).message}`);
    }
  }

  private tell(notices: ReturnType<NoticeDecider['fromApps']>): void {
    if (notices.length && this.deps.enabled()) this.deps.events.emit('notices.show', { notices });
  }
}
