/**
 * Says aloud outcomes the screen already shows, through the live regions of `Announcements`. Polite
 * news is said at most once per `gapMs`, what came meanwhile together; alerts are said at once.
 */
export class Announcer {
  polite = $state('');
  alert = $state('');
  private last = -Infinity;
  private pending: string[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private alerts = 0;

  private gapMs: number;

  constructor(gapMs = 1500) {
    this.gapMs = gapMs;
  }

  say(message: string): void {
    if (!message || this.pending.includes(message)) return;
    this.pending.push(message);
    this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.last + this.gapMs - Date.now()));
  }

  warn(message: string): void {
    const n = ++this.alerts;
    this.alert = '';
    // Emptied first, so the same refusal twice is said twice.
    setTimeout(() => n === this.alerts && (this.alert = message), 0);
  }

  /** The alert is over once the user acts again. */
  calm(): void {
    this.alerts++;
    this.alert = '';
  }

  /** Work said to be going ("Copying 8 files…") is over: its line goes, answered or not. */
  settle(): void {
    this.pending = this.pending.filter((m) => !m.endsWith('…'));
    if (this.polite.endsWith('…')) this.polite = '';
  }

  stop(): void {
    this.calm();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
  }

  private flush() {
    this.timer = undefined;
    const next = this.pending.join(' ');
    this.pending = [];
    this.last = Date.now();
    this.polite = '';
    setTimeout(() => (this.polite = next), 0);
  }
}
