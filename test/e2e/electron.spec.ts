import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { expect, test, _electron as electron, type ElectronApplication, type Page } from '@playwright/test';
import { newHome } from './host.ts';
import { makeImages, startSandboxProcess, type SandboxProcess } from './studio-helpers.ts';

/**
 * The binary comes from outside the npm registry, so many machines (this CI among them) lack it.
 * Read the package's own record instead of require('electron'), which would try to download it.
 */
function electronBinary(): string | null {
  try {
    const dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const rel = readFileSync(join(dir, 'path.txt'), 'utf8').trim();
    const full = join(process.env.ELECTRON_OVERRIDE_DIST_PATH ?? join(dir, 'dist'), rel);
    return existsSync(full) ? full : null;
  } catch {
    return null;
  }
}

/** CI sets MEDIADESK_PACKAGED_APP to the packed app's executable: the test then runs the app as shipped. */
const packaged = process.env.MEDIADESK_PACKAGED_APP || null;
if (packaged && !existsSync(packaged)) throw new Error(`MEDIADESK_PACKAGED_APP=${packaged} does not exist`);
const binary = packaged ?? electronBinary();
if (!binary)
  console.log(
    'SKIPPED Electron launch test: the Electron binary is not installed on this machine (it downloads from outside the npm registry)',
  );

/** The packed app loads its own app.asar; the development binary is told where the app is. `given`: files and links. */
const appArgs = (given: string[]) => (packaged ? given : ['.', ...given]);
const launch = (env: Record<string, string>, given: string[] = []) =>
  electron.launch({
    executablePath: binary!,
    args: appArgs(given),
    env: { ...process.env, MEDIADESK_UPDATES: 'off', ...env } as Record<string, string>,
  });

let app: ElectronApplication | null = null;
let sandbox: SandboxProcess | null = null;
test.afterEach(async () => {
  await app?.close().catch(() => {});
  await sandbox?.stop();
  app = sandbox = null;
});

/** What the shell handed to Electron, recorded in the main process by the wrappers of recordShell. */
interface ShellRecord {
  progress: { value: number; mode: string | null }[];
  notices: { title: string; body: string }[];
  toolTips: string[];
  menu: Electron.Menu | null;
  drags: { file: string; iconWidth: number }[];
}
const shellRecord = (app: ElectronApplication) =>
  app.evaluate(() => {
    const r = (globalThis as unknown as { shellRecord: ShellRecord }).shellRecord;
    return { ...r, menu: r.menu?.items.map((i) => i.label) ?? null };
  });

/**
 * Wraps Electron's own methods in the main process, so the test sees what MediaDesk asked of them; each
 * wrapper records and calls the real method, except startDrag: a system drag with no mouse button held can hang or crash.
 */
async function recordShell(app: ElectronApplication) {
  return app.evaluate(({ BrowserWindow, Notification, Tray, webContents }) => {
    const record: ShellRecord = { progress: [], notices: [], toolTips: [], menu: null, drags: [] };
    (globalThis as unknown as { shellRecord: ShellRecord }).shellRecord = record;
    const setProgressBar = BrowserWindow.prototype.setProgressBar;
    BrowserWindow.prototype.setProgressBar = function (value, options) {
      record.progress.push({ value, mode: options?.mode ?? null });
      return setProgressBar.call(this, value, options);
    };
    const show = Notification.prototype.show;
    Notification.prototype.show = function () {
      record.notices.push({ title: this.title, body: this.body });
      return show.call(this);
    };
    const setToolTip = Tray.prototype.setToolTip;
    Tray.prototype.setToolTip = function (toolTip) {
      record.toolTips.push(toolTip);
      return setToolTip.call(this, toolTip);
    };
    const setContextMenu = Tray.prototype.setContextMenu;
    Tray.prototype.setContextMenu = function (menu) {
      record.menu = menu;
      return setContextMenu.call(this, menu);
    };
    const [contents] = webContents.getAllWebContents();
    Object.getPrototypeOf(contents).startDrag = (item: Electron.Item) => {
      record.drags.push({
        file: String(item.file),
        iconWidth: item.icon ? (item.icon as Electron.NativeImage).getSize().width : 0,
      });
    };
    return Notification.isSupported();
  });
}

/** A contract command through the window's own bridge, as the renderer sends it. */
const invoke = (win: Page, name: string, req: unknown) =>
  win.evaluate(
    ([n, r]) => (window as unknown as { desk: { invoke(n: string, r: unknown): Promise<unknown> } }).desk.invoke(n, r),
    [name, req] as const,
  );

test.describe('Electron shell', () => {
  test.skip(!binary, 'Electron binary not installed');
  // One app at a time, as before: not run on the 2-core machine (no Electron binary), so never tried side by side.
  test.describe.configure({ mode: 'default' });

  test('launches one secure window that shows the app over the Sandbox', async () => {
    app = await launch({ MEDIADESK_HOME: newHome() });
    const win = await app.firstWindow();
    await expect(win.getByRole('navigation', { name: 'Main' })).toBeVisible();
    await expect(win.getByTestId('backend-badge')).toContainText('Sandbox');
    // contextIsolation + sandbox + no nodeIntegration: the page sees the contract and nothing of Node.
    const surface = await win.evaluate(() => ({
      require: typeof (window as unknown as { require?: unknown }).require,
      process: typeof (window as unknown as { process?: unknown }).process,
      desk: Object.keys((window as unknown as { desk: object }).desk).sort(),
    }));
    expect(surface).toEqual({
      require: 'undefined',
      process: 'undefined',
      desk: ['download', 'downloadUrl', 'host', 'invoke', 'mediaUrl', 'on', 'pathForFile', 'startDrag', 'upload'],
    });
    // Navigation away from the app is blocked.
    await win.evaluate(() => {
      location.href = 'https://example.com/';
    });
    await expect(win.getByRole('navigation', { name: 'Main' })).toBeVisible();
  });

  test('a batch in the real window: taskbar progress, a notification, a result dragged out, the tray with the window closed', async () => {
    sandbox = await startSandboxProcess(1500);
    const home = newHome();
    const results = join(home, 'results');
    app = await launch({ MEDIADESK_HOME: home, MEDIADESK_OUTPUT_DIR: results, ...sandbox.env } as Record<
      string,
      string
    >);
    const win = await app.firstWindow();
    await expect(win.getByRole('navigation', { name: 'Main' })).toBeVisible();
    const notificationsSupported = await recordShell(app);
    expect(notificationsSupported, 'Electron shows notifications on Linux through libnotify (libnotify4)').toBe(true);
    // One job at a time, so the bar moves in steps.
    await invoke(win, 'settings.set', { concurrency: 1 });
    const shoot = mkdtempSync(join(tmpdir(), 'md-electron-'));
    await makeImages(shoot, 3);

    await win.getByTestId('nav-studio').click();
    await win.getByTestId('tool-select').selectOption('upscaler-precision');
    await win.getByTestId('typed-path').fill(shoot);
    await win.getByTestId('typed-path').press('Enter');
    await win.getByTestId('start').click();
    await expect(win).toHaveTitle('batch done · MediaDesk', { timeout: 60_000 });

    // The notice the browser tab shows, here as a system notification, once.
    await expect
      .poll(async () => (await shellRecord(app!)).notices)
      .toEqual([{ title: 'Precision upscaler: 3 images done', body: expect.stringMatching(/^Results are in /) }]);
    // The taskbar/dock bar rose through the batch, then was removed (-1) once it ended.
    await expect.poll(async () => (await shellRecord(app!)).progress.at(-1)?.value).toBe(-1);
    const { progress } = await shellRecord(app!);
    const run = progress.slice(progress.findIndex((p) => p.value >= 0)).map((p) => p.value);
    const rising = run.slice(0, run.indexOf(-1));
    expect(rising.length, JSON.stringify(progress)).toBeGreaterThan(1);
    expect(
      rising.every((v, i) => v >= 0 && v <= 1 && (i === 0 || v >= rising[i - 1])),
      JSON.stringify(run),
    ).toBe(true);
    expect(Math.max(...rising)).toBeGreaterThanOrEqual(2 / 3);
    expect(run.slice(run.indexOf(-1)).every((v) => v === -1)).toBe(true);
    expect(progress.every((p) => p.mode === 'normal')).toBe(true);

    // Drag out, as the gallery starts it: the result's own file goes to startDrag, with its picture as the icon.
    await win.getByTestId('nav-results').click();
    const tile = win.getByTestId('gallery-item').first();
    await expect(tile).toHaveAttribute('draggable', 'true');
    const name = (await tile.getAttribute('aria-label'))!;
    const handed = await tile.evaluate((el) => {
      const drag = new DragEvent('dragstart', { dataTransfer: new DataTransfer(), bubbles: true, cancelable: true });
      el.dispatchEvent(drag);
      return drag.defaultPrevented;
    });
    expect(handed).toBe(true);
    await expect.poll(async () => (await shellRecord(app!)).drags.length).toBe(1);
    const [drag] = (await shellRecord(app!)).drags;
    expect(basename(drag.file)).toBe(name);
    expect(realpathSync.native(drag.file).startsWith(realpathSync.native(results))).toBe(true);
    expect(drag.iconWidth).toBe(64);

    // A second batch; the window closes while it runs: the app stays, with a tray that follows the queue.
    const more = mkdtempSync(join(tmpdir(), 'md-electron-tray-'));
    await makeImages(more, 6);
    const before = (await shellRecord(app!)).progress.length;
    await invoke(win, 'batches.start', { tool: 'upscaler-precision', inputs: [more], params: {} });
    // The bar shows it: the core counts the batch as running, which is what keeps the app open.
    await expect
      .poll(async () => (await shellRecord(app!)).progress.slice(before).some((p) => p.value >= 0))
      .toBe(true);
    expect((await shellRecord(app!)).toolTips).toEqual([]);
    await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0].close());
    await expect.poll(async () => (await shellRecord(app!)).toolTips.length).toBeGreaterThan(0);
    // The menu is set with the tooltip, so it matches the latest one.
    const shown = await shellRecord(app!);
    const toolTip = shown.toolTips.at(-1)!;
    const [, done] = /^MediaDesk: ([0-5]) of 6 done$/.exec(toolTip) ?? [];
    expect(done, toolTip).toBeDefined();
    expect(shown.menu).toEqual([`${done} of 6 done`, '', 'Open MediaDesk', 'Pause queue', 'Quit']);
    // Jobs go on with the window closed, and the tray says so.
    await expect
      .poll(async () => (await shellRecord(app!)).toolTips.at(-1), { timeout: 30_000 })
      .toMatch(new RegExp(`^MediaDesk: (?!${done} )(\\d of 6 done|All done)$`));
    expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(0);

    // Quit from the tray ends the app (clicked after this call returns, so its answer is not lost with the process).
    const exited = new Promise<number | null>((resolve) => app!.process().once('exit', (code) => resolve(code)));
    await app.evaluate(() => {
      const { menu } = (globalThis as unknown as { shellRecord: ShellRecord }).shellRecord;
      const quit = menu!.items.find((i) => i.label === 'Quit')!;
      setTimeout(() => quit.click(), 0);
    });
    expect(await exited).toBe(0);
  });

  test('crash dumps stay in the data folder, sent nowhere; Help > Report a Problem… makes the zip and shows it', async () => {
    const home = newHome();
    app = await launch({ MEDIADESK_HOME: home, MEDIADESK_OUTPUT_DIR: join(home, 'out') });
    await app.firstWindow();
    expect(await app.evaluate(({ app }) => app.getPath('crashDumps'))).toBe(join(home, 'crashes'));
    // The file manager is not opened in a test: what it was asked to show is recorded instead.
    await app.evaluate(({ Menu, shell }) => {
      const shown: string[] = [];
      (globalThis as unknown as { shown: string[] }).shown = shown;
      shell.showItemInFolder = (path) => void shown.push(path);
      const help = Menu.getApplicationMenu()!.items.find((i) => i.role === 'help' || i.label === 'Help')!;
      help.submenu!.items.find((i) => i.label === 'Report a Problem…')!.click();
    });
    const shown = () => app!.evaluate(() => (globalThis as unknown as { shown: string[] }).shown);
    await expect.poll(async () => (await shown()).length).toBe(1);
    const [zip] = await shown();
    expect(dirname(zip)).toBe(join(home, 'out', 'Exports'));
    expect(basename(zip)).toMatch(/^MediaDesk problem report .+\.zip$/);
    expect(existsSync(zip)).toBe(true);
  });

  test('started with a folder, the Studio shows it; a second start with a link fills it again, nothing started', async () => {
    const home = newHome();
    const shoot = mkdtempSync(join(tmpdir(), 'md-electron shoot é-'));
    const more = mkdtempSync(join(tmpdir(), 'md-electron-more-'));
    await makeImages(shoot, 3);
    await makeImages(more, 2);
    const env = { MEDIADESK_HOME: home, MEDIADESK_OUTPUT_DIR: join(home, 'out') };
    app = await launch(env, [shoot]);
    const win = await app.firstWindow();
    await expect(win.getByTestId('screen-studio')).toBeVisible();
    await expect(win.getByTestId('check-summary')).toHaveText('3 images ready');

    // The second start hands its argv to the running app through Electron's single-instance lock, then quits.
    const link = `mediadesk://studio?${new URLSearchParams({ tool: 'upscaler-precision', folder: more })}`;
    const second = spawn(binary!, appArgs([link]), {
      env: { ...process.env, MEDIADESK_UPDATES: 'off', ...env },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((done) => second.once('exit', done));
    await expect(win.getByTestId('check-summary')).toHaveText('2 images ready');
    await expect(win.getByTestId('tool-select')).toHaveValue('upscaler-precision');
    expect(await exited).toBe(0);
    expect(await invoke(win, 'batches.list', {})).toEqual([]);

    // macOS and Linux add the right-click from the File menu; only the installed app may (it registers itself).
    const fileMenu = await app.evaluate(({ Menu }) =>
      (Menu.getApplicationMenu()?.items.find((i) => i.label === 'File')?.submenu?.items ?? []).map((i) => ({
        label: i.label,
        enabled: i.enabled,
      })),
    );
    if (process.platform !== 'win32')
      expect(fileMenu[0]).toEqual({
        label: process.platform === 'darwin' ? 'Add Finder Quick Action' : 'Add to the File Manager',
        enabled: packaged !== null,
      });
  });
});
