import type { RenderMode } from './results.ts';
import { buildServer } from './server.ts';

export { DEMO_KEYS, type DemoKey } from './keys.ts';
export type { RenderMode } from './results.ts';
export type { LimitsConfig, LimitsOption } from './limits.ts';
import type { LimitsOption } from './limits.ts';

export interface StartSandboxOptions {
  port?: number;
  seed?: number;
  taskDurationMs?: number;
  now?: () => number;
  /** Benchmark aid, default `faithful`: `fast` serves a fixed tiny image for every image result. */
  renderMode?: RenderMode;
  /** A file keeping its tasks (and so the recent creations) across restarts. */
  taskJournal?: string;
  /** The service's rates and per-plan daily caps (README, "Limits"); default `off`. */
  limits?: LimitsOption;
  /** Audit events seeded at the start, at least (default SEEDED_EVENT_COUNT): fewer for tests that walk them all often. */
  auditEvents?: number;
}

export interface RunningSandbox {
  /** http://127.0.0.1:PORT, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the Sandbox on 127.0.0.1 (never another interface). Port 0 picks a free port. */
export async function startSandbox(opts: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const { app, setBaseUrl, shutdown } = buildServer({
    seed: opts.seed ?? 1,
    taskDurationMs: opts.taskDurationMs,
    now: opts.now ?? Date.now,
    renderMode: opts.renderMode,
    taskJournal: opts.taskJournal,
    limits: opts.limits,
    auditEvents: opts.auditEvents,
  });
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('the Sandbox did not bind a TCP port');
  const url = `http://127.0.0.1:${addr.port}`;
  setBaseUrl(url);
  let closing: Promise<void> | undefined;
  return { url, port: addr.port, close: () => (closing ??= shutdown()) };
}
