/**
 * The web host keeps a browser's upload at `<data folder>/inbox/<drop>/<its path in the drop>`, the
 * drop a 32-hex-digit id (renderer bridge.ts): a folder no one chose, whose id means nothing to them.
 */
const UPLOADED = /[\\/]inbox[\\/][0-9a-f]{32}[\\/](.+)$/;

/** A path as people know it: an upload by its own name (inside the folder it was dropped with), any other as it is. */
export const shownPath = (path: string): string => UPLOADED.exec(path)?.[1] ?? path;
