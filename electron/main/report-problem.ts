import { app, crashReporter, dialog, shell, type BrowserWindow } from 'electron';
import { crashesDir } from '../core/problem-report.ts';
import type { Core } from '../core/index.ts';
import type { AppLog } from '../core/log/index.ts';
import type { Res } from '../../shared/contract/index.ts';

/** Crash dumps are written to the data folder for Report a problem, and never uploaded. Before app ready. */
export function keepCrashDumps(home: string): void {
  app.setPath('crashDumps', crashesDir(home));
  crashReporter.start({ uploadToServer: false, compress: false });
}

/** Help > Report a problem: the zip is built, then shown in the file manager; nothing is sent. */
export async function reportProblem(core: Core, win: BrowserWindow | null, log: AppLog): Promise<void> {
  const reply = await core.dispatch('support.report', {});
  if (reply.ok) {
    shell.showItemInFolder((reply.result as Res<'support.report'>).path);
    return;
  }
  log.warn('Report a problem failed:', reply.error);
  const box = { type: 'error' as const, message: 'The problem report could not be made', detail: reply.error.message };
  await (win ? dialog.showMessageBox(win, box) : dialog.showMessageBox(box));
}
