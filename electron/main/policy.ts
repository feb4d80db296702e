/**
 * The shell's security decisions as plain functions of URLs and names: security.ts and ipc.ts
 * apply them to Electron's events, and test/unit/shell-policy.test.ts checks them without
 * Electron (its binary cannot be fetched everywhere the tests run).
 */

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

/**
 * What the page may use: clipboard-sanitized-write (Copy prompt) and fullscreen (a video's own
 * button), whose refusal broke both in the desktop app only. All else is refused, and nothing at all
 * is granted to another page or a subframe.
 */
const PAGE_PERMISSIONS = new Set(['clipboard-sanitized-write', 'fullscreen']);

export function permissionAllowed(
  permission: string,
  request: { url: string | undefined; mainFrame: boolean },
  rendererUrl: string,
): boolean {
  return (
    PAGE_PERMISSIONS.has(permission) &&
    request.mainFrame &&
    request.url !== undefined &&
    isOwnRenderer(request.url, rendererUrl)
  );
}

/** A link the OS browser may open: https only (no file:, smb:, custom schemes that start programs), no user:password@. */
export function externalLink(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && !u.username && !u.password ? u.href : null;
  } catch {
    return null;
  }
}

/** An IPC message is ours when it comes from our window's main frame showing our renderer: never from an iframe or another window. */
export function trustedIpcSender(
  sender: { ourWindow: boolean; mainFrame: boolean; url: string | null },
  rendererUrl: string,
): boolean {
  return sender.ourWindow && sender.mainFrame && sender.url !== null && isOwnRenderer(sender.url, rendererUrl);
}

/**
 * The preload's own channel: a path it took from a real File the person dropped or picked
 * (webUtils.getPathForFile), which main grants for the session (PathPolicy.grant). Not a contract
 * command, so a page cannot name one; a page's File made in script has no path.
 */
export const CHOSEN_CHANNEL = 'desk:chosen';

/** The path main grants for a message on CHOSEN_CHANNEL: only our own main frame's, only an absolute path; else null. */
export function chosenPath(trusted: boolean, path: unknown): string | null {
  if (!trusted || typeof path !== 'string' || !path || path.includes('\0')) return null;
  return /^([A-Za-z]:[\\/]|[\\/])/.test(path) ? path : null;
}
