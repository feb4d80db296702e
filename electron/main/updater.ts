import { app, dialog, type BrowserWindow } from 'electron';
import electronUpdater from 'electron-updater';
import type { AppLog } from '../core/log/index.ts';
import { automaticUpdatesOff, updatesUnavailable, type UpdateContext } from './lifecycle-policy.ts';

/**
 * Updates from the GitHub Releases feed electron-builder wrote into app-update.yml: looked for a
 * few seconds after start and from Help > Check for Updates, downloaded in the background,
 * installed when the app quits. Nothing is fetched where lifecycle-policy.ts says no.
 */
export interface Updater {
  /** From the menu: looks now and says what it found, even when automatic updates are off. */
  checkFromMenu(win: BrowserWindow | null): Promise<void>;
  /** Why the menu item is disabled, or null. */
  readonly unavailable: string | null;
}

const START_DELAY_MS = 10_000;

export function startUpdater(log: AppLog, context: () => UpdateContext): Updater {
  const { autoUpdater } = electronUpdater;
  const unavailable = updatesUnavailable(context());
  const atStart = automaticUpdatesOff(context());
  if (atStart) log.info(`updates: not looked for at start: ${atStart}`);
  if (unavailable) return { unavailable, checkFromMenu: async () => {} };

  autoUpdater.logger = { info: log.info, warn: log.warn, error: log.error, debug: log.debug };
  autoUpdater.autoDownload = true;
  autoUpdater.autoInstallOnAppQuit = true;
  autoUpdater.on('error', (err) => log.error('updates:', err));
  autoUpdater.on('update-downloaded', (info) => {
    log.info(`updates: ${info.version} downloaded; it is installed when MediaDesk quits`);
  });

  if (!atStart) {
    const timer = setTimeout(() => {
      autoUpdater.checkForUpdates().catch((err: unknown) => log.warn('updates: the check at start failed:', err));
    }, START_DELAY_MS);
    app.once('will-quit', () => clearTimeout(timer));
  }

  return {
    unavailable: null,
    async checkFromMenu(win) {
      const say = (message: string, detail?: string) =>
        win && !win.isDestroyed()
          ? dialog.showMessageBox(win, { type: 'info', message, detail })
          : dialog.showMessageBox({ type: 'info', message, detail });
      try {
        const result = await autoUpdater.checkForUpdates();
        const found = result?.isUpdateAvailable ? result.updateInfo.version : null;
        if (!found) await say(`MediaDesk ${app.getVersion()} is the newest version.`);
        else
          await say(
            `MediaDesk ${found} is downloading.`,
            'It is installed when you quit MediaDesk; your data folder and settings are kept.',
          );
      } catch (err) {
        log.warn('updates: the check from the menu failed:', err);
        await say('MediaDesk could not look for updates.', (err as Error).message);
      }
    },
  };
}
