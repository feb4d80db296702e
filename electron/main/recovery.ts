import { app, dialog, type BrowserWindow } from 'electron';
import type { AppLog } from '../core/log/index.ts';
import { afterRendererGone, rendererGoneWords } from './lifecycle-policy.ts';

/** Main-process errors and rejections nobody caught: logged, and the app goes on as Electron's default would. */
export function logUncaught(log: AppLog): void {
  process.on('uncaughtException', (err) => {
    log.error('uncaught exception in main:', err);
    dialog.showErrorBox('MediaDesk ran into an error', `${err.message}\n\nThe log has the details: Help > Show Logs.`);
  });
  process.on('unhandledRejection', (reason) => log.error('unhandled rejection in main:', reason));
  app.on('child-process-gone', (_e, details) => {
    if (details.reason !== 'clean-exit') log.warn(`${details.type} process gone:`, details);
  });
}

/**
 * The window's renderer crashing, hanging or failing to load is logged; a crash reloads the
 * page with a notice instead of leaving the window blank (queued work runs in main and goes on).
 */
export function recoverWindow(win: BrowserWindow, log: AppLog): void {
  let crashes: number[] = [];
  const contents = win.webContents;
  contents.on('render-process-gone', (_e, details) => {
    if (win.isDestroyed()) return;
    log.error(`renderer gone: ${details.reason} (exit code ${details.exitCode})`);
    const next = afterRendererGone(details.reason, crashes, Date.now());
    crashes = next.recent;
    const words = rendererGoneWords(details.reason);
    if (next.reload === 'now') {
      contents.reload();
      void dialog.showMessageBox(win, {
        type: 'warning',
        message: `${words} and was reloaded.`,
        detail: 'Batches and downloads kept running. If it happens again, the log helps: Help > Show Logs.',
      });
    } else if (next.reload === 'ask') {
      void dialog
        .showMessageBox(win, {
          type: 'error',
          message: `${words} again: ${crashes.length} times within a minute.`,
          detail: 'Reload to try once more, or quit and send the log (Help > Show Logs) with what you were doing.',
          buttons: ['Reload', 'Quit'],
          defaultId: 0,
        })
        .then(({ response }) => {
          if (response === 1) app.quit();
          else if (!win.isDestroyed()) contents.reload();
        });
    }
  });
  contents.on('preload-error', (_e, path, err) => log.error(`preload ${path} failed:`, err));
  contents.on('did-fail-load', (_e, code, description, url, isMainFrame) => {
    if (isMainFrame) log.error(`the window could not load ${url}: ${description} (${code})`);
  });
  contents.on('console-message', (details) => {
    if (details.level === 'error') log.warn(`renderer: ${details.message} (${details.sourceId}:${details.lineNumber})`);
  });
  win.on('unresponsive', () => log.warn('the window is not responding'));
  win.on('responsive', () => log.info('the window responds again'));
}
