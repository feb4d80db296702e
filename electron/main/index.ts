import { app, BrowserWindow, dialog, Menu, net, protocol, shell } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { apiEnvProblem } from '../core/api-env.ts';
import { createCore, type Core } from '../core/index.ts';
import { openLog } from '../core/log/index.ts';
import { couldNotOpen } from '../core/open-file.ts';
import { dataHome, dbPaths } from '../core/paths.ts';
import { openSettingsFile } from '../core/settings.ts';
import { startBuiltInSandbox } from '../sandbox/built-in.ts';
import { wireIpc } from './ipc.ts';
import { chooseFiles } from './choose.ts';
import { wireHandOffs } from './handed.ts';
import { wireBatchProgress } from './progress.ts';
import { WorkTray } from './tray.ts';
import { desktopWork } from '../../shared/work-status.ts';
import type { Notice } from '../../shared/contract/notices.ts';
import { buildMenu } from './menu.ts';
import { logUncaught, recoverWindow } from './recovery.ts';
import { hardenContents, hardenSessions } from './security.ts';
import { startUpdater, type Updater } from './updater.ts';
import { keepCrashDumps, reportProblem } from './report-problem.ts';
import { followIntegrationSwitches, integrateFromMenu, integrationsUnavailable } from './integrations.ts';

// Same folder as the web host and the CLI (MEDIADESK_HOME honoured), so all three share one database.
const home = dataHome();
app.setPath('userData', home);
const log = openLog({ home, name: 'main', console: !app.isPackaged });
logUncaught(log);
keepCrashDumps(home);
// Result files reach the page through this scheme only, never file://; streaming serves video.
protocol.registerSchemesAsPrivileged([
  { scheme: 'desk-media', privileges: { standard: true, secure: true, stream: true, supportFetchAPI: true } },
]);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  let win: BrowserWindow | null = null;
  let core: Core | null = null;
  let updater: Updater | null = null;
  let tray: WorkTray | null = null;
  let unprogress: (() => void) | null = null;
  /** Opens the window again (from the tray, a second launch, the dock). */
  let reopen: (() => void) | null = null;
  const rendererUrl =
    process.env.ELECTRON_RENDERER_URL ?? pathToFileURL(join(import.meta.dirname, '../renderer/index.html')).href;

  const startHandOffs = wireHandOffs(() => reopen?.());

  hardenContents(rendererUrl);

  const started = app.whenReady().then(async () => {
    // As the CLI and the web host: a half-set or malformed API target is said and the app not started on it.
    const envProblem = apiEnvProblem(process.env);
    if (envProblem) {
      log.error(`not started: ${envProblem}`);
      dialog.showErrorBox('MediaDesk cannot start', envProblem);
      app.exit(2);
      return;
    }
    hardenSessions(rendererUrl);
    // Guarded as the web host's is: an unreadable settings.json starts the app on defaults, kept as it is.
    const store = openSettingsFile(home);
    core = await createCore({
      home,
      host: 'electron',
      settingsFile: store,
      log,
      startSandbox: () => startBuiltInSandbox(dbPaths(home).sandboxTasks),
      overrides: {
        'shell.open': async ({ path }) => {
          const err = await shell.openPath(core!.openable(path));
          if (err) throw new Error(err);
          return { ok: true as const };
        },
        'shell.reveal': ({ path }) => {
          shell.showItemInFolder(core!.openable(path));
          return { ok: true as const };
        },
        'shell.openFolder': async ({ path }) => {
          const folder = core!.openableFolder(path);
          if (await shell.openPath(folder)) throw new Error(couldNotOpen('folder', folder));
          return { ok: true as const };
        },
        'files.choose': chooseFiles(
          (o) => (win ? dialog.showOpenDialog(win, o) : dialog.showOpenDialog(o)),
          (p) => core!.pathPolicy?.grant(p),
        ),
      },
    });

    const settings = core.settings;
    updater = startUpdater(log, () => ({
      packaged: app.isPackaged,
      env: process.env,
      autoUpdate: settings.get().autoUpdate,
    }));
    const showMenu = () =>
      Menu.setApplicationMenu(
        buildMenu({
          showLogs: () => void shell.openPath(log.dir),
          reportProblem: () => void reportProblem(core!, win, log),
          checkForUpdates: () => void updater?.checkFromMenu(win),
          updatesUnavailable: updater?.unavailable ?? null,
          autoUpdate: settings.get().autoUpdate,
          setAutoUpdate: (on) => settings.set({ autoUpdate: on }),
          integrate: (remove) => void integrateFromMenu(settings.get(), remove, win, log),
          integrationUnavailable: integrationsUnavailable(),
        }),
      );
    showMenu();
    // The menu's checkbox follows the setting, changed from the menu or from Settings.
    settings.on('changed', showMenu);
    followIntegrationSwitches(settings, log);

    protocol.handle('desk-media', (req) => {
      try {
        const abs = core!.media.check(new URL(req.url).searchParams.get('path') ?? '');
        return net.fetch(pathToFileURL(abs).href, { headers: req.headers });
      } catch (err) {
        return new Response((err as Error).message, { status: 403 });
      }
    });

    const openWindow = async () => {
      tray?.hide();
      if (win) {
        if (win.isMinimized()) win.restore();
        win.show();
        win.focus();
        return;
      }
      const w = new BrowserWindow({
        width: 1280,
        height: 820,
        // The layout holds down to 600 px wide (nav rail, stacked Studio; test/e2e/layout.spec.ts),
        // so a half-screen or tiled window works too.
        minWidth: 600,
        minHeight: 700,
        show: false,
        title: 'MediaDesk',
        backgroundColor: '#1b1d22',
        webPreferences: {
          preload: join(import.meta.dirname, '../preload/index.cjs'),
          contextIsolation: true,
          sandbox: true,
          nodeIntegration: false,
          webSecurity: true,
          spellcheck: false,
        },
      });
      win = w;
      recoverWindow(w, log);
      const unwire = wireIpc(core!, w, rendererUrl);
      w.on('closed', () => {
        unwire();
        win = null;
      });
      w.once('ready-to-show', () => w.show());
      // A failed load is logged (recovery.ts) and the window stays for View > Reload: not a failed start.
      await w.loadURL(rendererUrl).catch(() => {});
    };
    /** A notice clicked: the window, on the notice's screen. */
    const openOn = async (notice: Notice) => {
      await openWindow();
      const hash = `#${notice.screen}`;
      win?.webContents.executeJavaScript(`location.hash = ${JSON.stringify(hash)}`).catch(() => {});
    };
    tray = new WorkTray(core, { open: () => void openWindow(), quit: () => app.quit() });
    unprogress = wireBatchProgress(
      core,
      () => win,
      (n) => void openOn(n),
    );
    reopen = () => void openWindow();
    app.on('activate', reopen);
    await openWindow();
    startHandOffs(openWindow, () => win, core);
  });
  started.catch((err: unknown) => {
    log.error('MediaDesk could not start:', err);
    dialog.showErrorBox('MediaDesk cannot start', `${(err as Error).message}\n\nThe log: ${log.file}`);
    app.exit(1);
  });

  // Closing the window while batches run keeps them running, with the tray to come back or quit.
  app.on('window-all-closed', () => {
    const keep = core && desktopWork(core.notices?.unfinished() ?? [], core.engine.status()).keepsRunning;
    if (keep) tray?.show();
    else app.quit();
  });
  app.on('will-quit', () => {
    unprogress?.();
    tray?.stop();
    void core?.close();
  });
}
