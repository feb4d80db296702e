import { app, type BrowserWindow } from 'electron';
import { grantHandOff, handOffFiles, handOffFromArgv, linkHandOff, mergeHandOffs } from '../core/handoff.ts';
import { handOffSchema, LINK_SCHEME, type HandOff } from '../../shared/contract/handoff.ts';

/**
 * Files, folders and links handed to the app (its argv, a second start, Open with, mediadesk://),
 * parsed by core/handoff.ts: held until the core and the window are up, then granted as a drop's
 * paths are and told to the window as `studio.handOff`. Nothing starts by itself. Call before ready:
 * macOS sends open-file and open-url at launch.
 */
export function wireHandOffs(reopen: () => void) {
  const handed: HandOff[] = [];
  let take: (() => void) | null = null;
  const handOver = (hs: HandOff[]) => {
    handed.push(...hs);
    if (hs.length) take?.();
  };
  // In development argv is `electron APP ...` (process.defaultApp); packed, the executable then the args.
  const packed = !process.defaultApp;
  handOver(handOffFromArgv(process.argv, { packed, cwd: process.cwd() }));
  app.on('second-instance', (_e, argv, cwd) => {
    handOver(handOffFromArgv(argv, { packed, cwd }));
    reopen();
  });
  app.on('open-file', (e, path) => {
    e.preventDefault();
    handOver([handOffFiles([path], process.cwd())]);
  });
  app.on('open-url', (e, url) => {
    e.preventDefault();
    handOver([linkHandOff(url)]);
  });
  // A development build would register the bare Electron binary: only the packed app claims the scheme.
  if (app.isPackaged) app.setAsDefaultProtocolClient(LINK_SCHEME);

  /** Once the core and window are up: sends what is held, and what comes later as it comes. */
  return (openWindow: () => Promise<void>, win: () => BrowserWindow | null, grant: (path: string) => void) => {
    const send = () => {
      const w = win();
      if (!w || w.webContents.isLoading()) return;
      for (const h of mergeHandOffs(handed.splice(0)))
        w.webContents.send('desk:event:studio.handOff', handOffSchema.parse(grantHandOff(h, grant)));
    };
    // macOS sends open-file once per file: a moment's wait takes one Open with as one hand-off.
    let timer: ReturnType<typeof setTimeout> | undefined;
    take = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void openWindow().then(send), 150);
    };
    send();
  };
}
