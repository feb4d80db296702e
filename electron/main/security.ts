import { app, shell, session, type WebContents } from 'electron';

/** The renderer's CSP: our own files only, results through the desk-media: protocol. */
export const RENDERER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: desk-media:",
  "media-src 'self' blob: desk-media:",
  "connect-src 'self' desk-media:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

/** Whether a URL is our renderer (the built file, or the dev server in `npm run dev`). */
export function isOwnRenderer(url: string, rendererUrl: string): boolean {
  try {
    const u = new URL(url);
    const r = new URL(rendererUrl);
    return u.protocol === r.protocol && u.host === r.host && u.pathname === r.pathname;
  } catch {
    return false;
  }
}

export function hardenSessions(): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [RENDERER_CSP] } });
  });
  // No camera, microphone, geolocation... The app needs none of them.
  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback) => callback(permission === 'notifications'));
  session.defaultSession.setPermissionCheckHandler((_wc, permission) => permission === 'notifications');
}

/** Every web contents: no navigation away, no new windows; https links open in the OS browser. */
export function hardenContents(rendererUrl: string): void {
  app.on('web-contents-created', (_e, contents: WebContents) => {
    contents.on('will-navigate', (event, url) => {
      if (!isOwnRenderer(url, rendererUrl)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (url.startsWith('https://')) void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}
