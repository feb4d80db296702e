import { app, BrowserWindow, dialog, Menu, net, protocol, shell } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ElectronStore from 'electron-store';
import { apiEnvProblem } from '../core/api-env.ts';
import { createCore, type Core } from '../core/index.ts';
import { openLog } from '../core/log/index.ts';
import { couldNotOpen } from '../core/open-file.ts';
import { dataHome, dbPaths } from '../core/paths.ts';
import { GuardedStore, SETTINGS_FILE, type JsonFileStore } from '../core/settings.ts';
import { startSandbox } from '../sandbox/index.ts';
import { wireIpc } from './ipc.ts';
import { wireBatchProgress } from './progress.ts';
import { buildMenu } from './menu.ts';
import { logUncaught, recoverWindow } from './recovery.ts';
import { hardenContents, hardenSessions } from './security.ts';
import { startUpdater, type Updater } from './updater.ts';

// Same folder as the web host and the CLI (MEDIADESK_HOME honoured), so all three share one database.
const home = dataHome();
app.setPath('userData', home);
const log = openLog({ home, name: 'main', console: !app.isPackaged });
logUncaught(log);
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
  const rendererUrl =
    process.env.ELECTRON_RENDERER_URL ?? pathToFileURL(join(import.meta.dirname, '../renderer/index.html')).href;

  app.on('second-instance', () => {
    if (win) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
  });

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
    const store = new GuardedStore(
      join(home, `${SETTINGS_FILE}.json`),
      () => new ElectronStore<Record<string, unknown>>({ cwd: home, name: SETTINGS_FILE }) as unknown as JsonFileStore,
    );
    core = await createCore({
      home,
      host: 'electron',
      settingsFile: store,
      log,
      startSandbox: () => startSandbox({ port: 0, taskJournal: dbPaths(home).sandboxTasks }),
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
          checkForUpdates: () => void updater?.checkFromMenu(win),
          updatesUnavailable: updater?.unavailable ?? null,
          autoUpdate: settings.get().autoUpdate,
          setAutoUpdate: (on) => settings.set({ autoUpdate: on }),
        }),
      );
    showMenu();
    // The menu's checkbox follows the setting, changed from the menu or from Settings.
    settings.on('changed', showMenu);

    protocol.handle('desk-media', (req) => {
      try {
        const abs = core!.media.check(new URL(req.url).searchParams.get('path') ?? '');
        return net.fetch(pathToFileURL(abs).href, { headers: req.headers });
      } catch (err) {
        return new Response((err as Error).message, { status: 403 });
      }
    });

    win = new BrowserWindow({
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
    recoverWindow(win, log);
    const unwire = wireIpc(core, win, rendererUrl);
    const unprogress = wireBatchProgress(core, win);
    win.on('closed', () => {
      unwire();
      unprogress();
      win = null;
    });
    win.once('ready-to-show', () => win?.show());
    // A failed load is logged (recovery.ts) and the window stays for View > Reload: not a failed start.
    await win.loadURL(rendererUrl).catch(() => {});
  });
  started.catch((err: unknown) => {
    log.error('MediaDesk could not start:', err);
    dialog.showErrorBox('MediaDesk cannot start', `${(err as Error).message}\n\nThe log: ${log.file}`);
    app.exit(1);
  });

  app.on('window-all-closed', () => {
    app.quit();
  });
  app.on('will-quit', () => {
    void core?.close();
  });
}
