import { app, dialog, type BrowserWindow } from 'electron';
import { applyIntegrationPlan, followSwitches, integrationPlace } from '../core/os-integration-apply.ts';
import { INTEGRATION_SETTINGS, integrationPlan, type IntegrationSwitches } from '../core/os-integration.ts';
import type { AppLog } from '../core/log/index.ts';
import type { SettingsService } from '../core/settings.ts';
import { LINK_SCHEME } from '../../shared/contract/handoff.ts';

/** Why the menu cannot add integrations here, or null: a development build would register the bare Electron binary. */
export const integrationsUnavailable = () =>
  app.isPackaged ? null : 'Only the installed app adds itself to the file manager (this is a development build)';

/** The packed app's executable as the file manager must run it: an AppImage's own path, not its mount. */
const executable = () => process.env.APPIMAGE || process.execPath;

/**
 * Settings > System honoured by the running app: the link scheme claimed or given up, and what the
 * installer (Windows, at each start: an update runs it again) or the menu (macOS, Linux) installed
 * brought in line with the switches whenever they change.
 */
export function followIntegrationSwitches(settings: SettingsService, log: AppLog): void {
  if (!app.isPackaged) return;
  let last = '';
  const follow = () => {
    const s = settings.get();
    const now = JSON.stringify(INTEGRATION_SETTINGS.map((k) => s[k]));
    if (now === last) return;
    const first = last === '';
    last = now;
    if (s.osLinks) app.setAsDefaultProtocolClient(LINK_SCHEME);
    else app.removeAsDefaultProtocolClient(LINK_SCHEME);
    // Other systems keep what the person installed until a switch moves.
    if (first && process.platform !== 'win32') return;
    void followSwitches(integrationPlace(executable(), process.env), s).then((done) => {
      for (const d of done ?? []) log[d.ok ? 'info' : 'warn'](`integrations: ${d.said}`);
    });
  };
  follow();
  settings.on('changed', follow);
}

/** File > Add to the File Manager / Remove: writes or takes away what the switches allow, then says what was done. */
export async function integrateFromMenu(
  s: IntegrationSwitches,
  remove: boolean,
  win: BrowserWindow | null,
  log: AppLog,
): Promise<void> {
  const done = await applyIntegrationPlan(integrationPlan(integrationPlace(executable(), process.env), s, remove));
  for (const d of done) log[d.ok ? 'info' : 'warn'](`integrations: ${d.said}`);
  const failed = done.filter((d) => !d.ok);
  const added =
    process.platform === 'darwin'
      ? 'Finder now has Quick Actions > Process with MediaDesk'
      : 'The file manager now has “Process with MediaDesk”';
  const said = remove ? 'MediaDesk is no longer in the file manager' : added;
  const box = {
    type: failed.length ? ('warning' as const) : ('info' as const),
    message: failed.length ? 'Some of it could not be done' : said,
    detail: (failed.length ? failed : done.filter((d) => d.step.kind !== 'run')).map((d) => d.said).join('\n'),
  };
  await (win ? dialog.showMessageBox(win, box) : dialog.showMessageBox(box));
}
