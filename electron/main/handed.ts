import { app, type BrowserWindow } from 'electron';
import {
  givenArgs,
  grantHandOff,
  handOffFiles,
  handOffsToSend,
  linkHandOff,
  type HeldHandOff,
} from '../core/handoff.ts';
import type { Core } from '../core/index.ts';
import { handOffSchema, type HandOff } from '../../shared/contract/handoff.ts';

/**
 * Files, folders and links handed to the app (its argv, a second start, Open with, mediadesk://),
 * parsed by core/handoff.ts: held until the core and the window are up, then granted as a drop's
 * paths are and told to the window as `studio.handOff`. Nothing starts by itself. Call before ready:
 * macOS sends open-file and open-url at launch.
 */
export function wireHandOffs(reopen: () => void) {
  // Each with whether a link brought it: Settings > System can turn links off.
  const handed: HeldHandOff[] = [];
  let take: (() => void) | null = null;
  const handOver = (hs: HandOff[], link = false) => {
    handed.push(...hs.map((h) => ({ h, link })));
    if (hs.length) take?.();
  };
  const fromArgv = (argv: readonly string[], cwd: string) => {
    const given = givenArgs(argv, packed);
    if (given.paths.length || given.tool !== null) handOver([handOffFiles(given.paths, cwd, given.tool)]);
    handOver(given.links.map(linkHandOff), true);
  };
  // In development argv is `electron APP ...` (process.defaultApp); packed, the executable then the args.
  const packed = !process.defaultApp;
  fromArgv(process.argv, process.cwd());
  app.on('second-instance', (_e, argv, cwd) => {
    fromArgv(argv, cwd);
    reopen();
  });
  app.on('open-file', (e, path) => {
    e.preventDefault();
    handOver([handOffFiles([path], process.cwd())]);
  });
  app.on('open-url', (e, url) => {
    e.preventDefault();
    handOver([linkHandOff(url)], true);
  });

  /** Once the core and window are up: sends what is held, and what comes later as it comes. */
  return (openWindow: () => Promise<void>, win: () => BrowserWindow | null, core: Core) => {
    const grant = (path: string) => core.pathPolicy?.grant(path);
    const send = () => {
      const w = win();
      if (!w || w.webContents.isLoading()) return;
      const { send: hs, dropped } = handOffsToSend(handed.splice(0), core.settings.get().osLinks);
      if (dropped) core.log.info(`${dropped} mediadesk:// link(s) not opened: links are off in Settings > System`);
      for (const h of hs) w.webContents.send('desk:event:studio.handOff', handOffSchema.parse(grantHandOff(h, grant)));
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
