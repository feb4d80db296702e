import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temporary folder for a whole test run: the run's TMPDIR, so every folder a test, host, browser
 * or database makes in the temp root lands in it, and the process that made it takes it all away as it
 * exits (a run left gigabytes of data folders in /tmp). Processes the run starts inherit it; a run inside
 * a run (test-all.test.ts) uses its parent's and leaves it to the parent to remove.
 */
export function useRunTemp(label: string): string {
  const inherited = process.env.MEDIADESK_RUN_TMP;
  if (inherited) return inherited;
  const dir = mkdtempSync(join(tmpdir(), `mediadesk-${label}-`));
  // PostgreSQL's folders in it belong to the postgres user (test/pg.ts), who must be able to enter.
  chmodSync(dir, 0o755);
  process.env.MEDIADESK_RUN_TMP = dir;
  process.env.MEDIADESK_RUN_TMP_OWNER = String(process.pid);
  process.env.TMPDIR = dir;
  // As it exits, whether the run ended or stopped early (`playwright test --list`, a config error).
  process.once('exit', removeRunTemp);
  return dir;
}

/** Removes the run's folder, from the process that made it; MEDIADESK_KEEP_TMP=1 keeps it to look into. */
export function removeRunTemp(): void {
  const dir = process.env.MEDIADESK_RUN_TMP;
  if (!dir || process.env.MEDIADESK_RUN_TMP_OWNER !== String(process.pid) || process.env.MEDIADESK_KEEP_TMP === '1')
    return;
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
