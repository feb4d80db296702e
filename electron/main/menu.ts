import { app, Menu, shell, type MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  /** Opens the folder of log files in the OS file manager. */
  showLogs(): void;
  /** Builds the problem report's zip and shows it (support.report). */
  reportProblem(): void;
  checkForUpdates(): void;
  /** Why Check for Updates is unavailable in this process (a development build), or null. */
  updatesUnavailable: string | null;
  /** The autoUpdate setting, and how to change it. */
  autoUpdate: boolean;
  setAutoUpdate(on: boolean): void;
  /** Adds (or with `remove`, takes away) the Finder Quick Action or the file-manager actions. */
  integrate(remove: boolean): void;
  /** Why that is unavailable in this process (a development build), or null. */
  integrationUnavailable: string | null;
}

export function buildMenu(actions: MenuActions): Menu {
  const isMac = process.platform === 'darwin';
  const updates: MenuItemConstructorOptions[] = [
    {
      label: 'Check for Updates…',
      enabled: actions.updatesUnavailable === null,
      toolTip: actions.updatesUnavailable ?? undefined,
      click: () => actions.checkForUpdates(),
    },
    {
      label: 'Update Automatically',
      type: 'checkbox',
      checked: actions.autoUpdate,
      enabled: actions.updatesUnavailable === null,
      click: (item) => actions.setAutoUpdate(item.checked),
    },
  ];
  // Windows' installer adds the verbs and Send To; macOS and Linux add them from here (or `mediadesk integrate`).
  const integrate: MenuItemConstructorOptions[] =
    process.platform === 'win32'
      ? []
      : [
          {
            label: isMac ? 'Add Finder Quick Action' : 'Add to the File Manager',
            enabled: actions.integrationUnavailable === null,
            toolTip: actions.integrationUnavailable ?? undefined,
            click: () => actions.integrate(false),
          },
          {
            label: isMac ? 'Remove Finder Quick Action' : 'Remove from the File Manager',
            enabled: actions.integrationUnavailable === null,
            click: () => actions.integrate(true),
          },
          { type: 'separator' },
        ];
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    { label: 'File', submenu: [...integrate, isMac ? { role: 'close' as const } : { role: 'quit' as const }] },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'reload' },
        ...(app.isPackaged ? [] : [{ role: 'toggleDevTools' as const }]),
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        { label: 'Show Logs', click: () => actions.showLogs() },
        { label: 'Report a Problem…', click: () => actions.reportProblem() },
        { type: 'separator' },
        ...updates,
        { type: 'separator' },
        { label: 'MediaDesk on the web', click: () => void shell.openExternal('https://github.com/') },
      ],
    },
  ];
  return Menu.buildFromTemplate(template);
}
