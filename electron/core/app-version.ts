import { readFileSync } from 'node:fs';

/** The app's version, from package.json (two folders up here and from the bundle in out/main alike). */
export const APP_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
