import { desk } from './bridge.ts';
import { baseName } from './paths.ts';

/**
 * A result dragged out of the window into another app (a folder, an editor, a mail). Under
 * Electron the system drags the file itself; in Chromium the drop downloads it (DownloadURL),
 * and other apps take its address.
 */
export function dragOut(path: string, e: DragEvent): void {
  if (desk.startDrag) {
    e.preventDefault();
    desk.startDrag(path);
    return;
  }
  if (!desk.downloadUrl || !e.dataTransfer) return;
  const url = new URL(desk.downloadUrl(path), location.href).href;
  e.dataTransfer.effectAllowed = 'copy';
  // The type only labels the download; the host's answer names the file and its type.
  e.dataTransfer.setData('DownloadURL', `application/octet-stream:${baseName(path)}:${url}`);
  e.dataTransfer.setData('text/uri-list', url);
}
