import { Menu, Tray } from 'electron';
import { desktopWork } from '../../shared/work-status.ts';
import type { Core } from '../core/index.ts';
import { badgeIcon } from './badge-icon.ts';

export interface TrayActions {
  open(): void;
  quit(): void;
}

/**
 * The tray (menu-bar) icon while work runs with the window closed: "3 of 20 done" or the state it
 * is held in and why (shared/work-status), Open MediaDesk, Pause or Resume queue, Quit. It follows the queue's events until the window opens again.
 */
export class WorkTray {
  private readonly core: Core;
  private readonly actions: TrayActions;
  private tray: Tray | null = null;
  private readonly off: () => void;

  constructor(core: Core, actions: TrayActions) {
    this.core = core;
    this.actions = actions;
    this.off = core.events.onAny((name) => {
      if (this.tray && name === 'jobs.changed') this.update();
    });
  }

  get shown(): boolean {
    return this.tray !== null;
  }

  show(): void {
    if (!this.tray) {
      this.tray = new Tray(badgeIcon());
      this.tray.on('click', () => this.actions.open());
    }
    this.update();
  }

  hide(): void {
    this.tray?.destroy();
    this.tray = null;
  }

  stop(): void {
    this.off();
    this.hide();
  }

  private update(): void {
    if (!this.tray) return;
    const queue = this.core.engine.status();
    const { toolTip, status, why, toggle } = desktopWork(this.core.notices?.unfinished() ?? [], queue);
    this.tray.setToolTip(toolTip);
    this.tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: status, enabled: false },
        ...(why ? [{ label: why, enabled: false }] : []),
        { type: 'separator' },
        { label: 'Open MediaDesk', click: () => this.actions.open() },
        {
          label: toggle,
          click: () => {
            if (queue.paused) this.core.engine.resume();
            else this.core.engine.pause();
            this.update();
          },
        },
        { label: 'Quit', click: () => this.actions.quit() },
      ]),
    );
  }
}
