/**
 * Never the user's media: what systems, NAS boxes and zip tools leave beside photos (.DS_Store,
 * Thumbs.db, @eaDir, __MACOSX), hidden files and our downloads in progress (.part). One rule for the
 * engine's folder walk and the screens copying a drop, so neither counts a file the other skips.
 */
const SYSTEM_NAMES = new Set([
  'thumbs.db',
  'desktop.ini',
  'ehthumbs.db',
  '.ds_store',
  '$recycle.bin',
  '__macosx',
  'system volume information',
  // Synology keeps its own JPEG thumbnails of every photo in @eaDir, and deleted files in #recycle.
  '@eadir',
  '#recycle',
  'lost+found',
]);

export const isIgnoredName = (name: string) =>
  name.startsWith('.') || SYSTEM_NAMES.has(name.toLowerCase()) || name.endsWith('.part');

/**
 * Whether any name in a relative path ("shoot/@eaDir/a.jpg/SYNOPHOTO_THUMB_XL.jpg") is ignored.
 * "." and ".." are steps, not hidden names: a path that climbs is the host's to refuse, by name.
 */
export const isIgnoredPath = (relPath: string) =>
  relPath.split(/[\\/]+/).some((p) => p !== '' && p !== '.' && p !== '..' && isIgnoredName(p));
