/**
 * Names of files and folders made from user data, valid on Windows, macOS and Linux alike: we keep
 * Windows' rules everywhere, since exFAT and NTFS drives keep them on every system and a name Linux
 * wrote may land on a USB drive or a PC.
 */

/** Characters Windows (and exFAT, NTFS) refuses in a name, and control characters. */
export const UNSAFE_NAME_CHARS = /[\\/:*?"<>|\u0000-\u001f]/g;

/** Device names Windows keeps, in any case and with any extension: `con.png` and `AUX .txt` are the device, not a file. */
const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(?= *(\.|$))/i;

/**
 * `name` as every system holds it: unsafe characters and a leading dot (hidden) become `_`, trailing
 * dots and spaces go (Windows drops them, merging `photo.` and `photo`), a device name gets `_`
 * after it (`con_.png`); nothing but dots and spaces gives `fallback`.
 */
export function portableName(name: string, fallback: string): string {
  const s = name
    .replace(UNSAFE_NAME_CHARS, '_')
    .trim()
    .replace(/[. ]+$/, '');
  if (!s) return fallback;
  return s.replace(/^\./, '_').replace(DEVICE, '$1_');
}

/**
 * Why every name a naming template renders would be invalid on Windows, or null. The template's
 * own text is the same in every name, so a character Windows refuses, a dot or space at its end,
 * or a device name before its first dot would spoil them all; `{name}` and the other parts vary.
 */
export function templateNameProblem(template: string): string | null {
  if (/[:*?"<>|\u0000-\u001f]/.test(template))
    return 'must not contain : * ? " < > | or control characters (Windows does not allow them in file names)';
  if (/[. ]$/.test(template))
    return 'must not end in a dot or a space (Windows drops them, so results would lose their names)';
  const head = template.split('.')[0];
  const device = !head.includes('{') && DEVICE.exec(head.trim());
  if (device)
    return `must not start with ${device[1]} before its first dot (Windows keeps that name for a device, so no result could be written)`;
  return null;
}

/**
 * What a path is to a file system that ignores case and Unicode form (macOS, Windows): two paths
 * with one key are one file there. Name checks held in memory compare keys, or two results whose
 * names differ only so (`Photo_x.png`, `photo_x.png`) would share one file on those systems.
 */
export const sameFileKey = (path: string) => path.normalize('NFC').toLowerCase();

/**
 * The longest path Windows programs take: MAX_PATH is 260 UTF-16 units, its closing NUL included.
 * Node writes longer ones (it prefixes `\\?\`), but Explorer and most programs then cannot open,
 * copy or delete the file.
 */
export const WINDOWS_MAX_PATH = 259;

/** Whether paths on `platform` (process.platform) keep Windows' limit: a caller that must render a name to check it can skip that elsewhere. */
export const hasWindowsPathLimit = (platform: string) => platform === 'win32';

/**
 * Why `path` is too long for Windows, or null; only when `platform` (process.platform) is win32,
 * where the path is this machine's. `room`: characters the name may still gain (a `-2`), which
 * the path must leave. Counted in UTF-16 units, as Windows counts (a JS string's length).
 */
export function windowsPathProblem(path: string, platform: string, room = 0): string | null {
  if (!hasWindowsPathLimit(platform) || path.length + room <= WINDOWS_MAX_PATH) return null;
  const limit = room
    ? `${WINDOWS_MAX_PATH - room} (Windows allows ${WINDOWS_MAX_PATH} in a path, and its name may still get a number)`
    : `the ${WINDOWS_MAX_PATH} Windows allows in a path`;
  return `${path} would be ${path.length} characters long, more than ${limit}; Explorer and most programs could not open it`;
}
