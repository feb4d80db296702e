import { app, shell, session, type WebContents } from 'electron';
import { externalLink, isOwnRenderer, permissionAllowed } from './policy.ts';

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

export function hardenSessions(rendererUrl: string): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [RENDERER_CSP] } });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback, details) =>
    callback(
      permissionAllowed(permission, { url: details.requestingUrl, mainFrame: details.isMainFrame }, rendererUrl),
    ),
  );
  session.defaultSession.setPermissionCheckHandler((_wc, permission, _origin, details) =>
    permissionAllowed(permission, { url: details.requestingUrl, mainFrame: details.isMainFrame }, rendererUrl),
  );
}

/** Every web contents: no navigation away (of any frame, nor by redirect), no new windows, no webviews; https links open in the OS browser. */
export function hardenContents(rendererUrl: string): void {
  app.on('web-contents-created', (_e, contents: WebContents) => {
    const stay = (event: { preventDefault(): void; url: string }) => {
      if (!isOwnRenderer(event.url, rendererUrl)) event.preventDefault();
    };
    contents.on('will-frame-navigate', stay);
    contents.on('will-redirect', stay);
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const link = externalLink(url);
      if (link) void shell.openExternal(link);
      return { action: 'deny' };
    });
  });
}
