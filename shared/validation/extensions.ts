/**
 * File-name extensions and the formats the catalogue names them by: one map for the engine's
 * pre-flight, the video builder and the file pickers, so a spelling taken in one is taken in all.
 * `.jfif` is what Windows names a JPEG saved from a browser; `.jpe` is an older spelling.
 */
export const EXT_FORMAT: Readonly<Record<string, string>> = {
  jpg: 'jpeg',
  jpeg: 'jpeg',
  jpe: 'jpeg',
  jfif: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  mp4: 'mp4',
  mov: 'mov',
  webm: 'webm',
  mp3: 'mp3',
  wav: 'wav',
  m4a: 'm4a',
};

/** A file picker's `accept` list for these formats: `jpeg` gives .jpg, .jpeg, .jpe and .jfif. */
export function acceptList(formats: readonly string[]): string {
  return formats
    .flatMap((f) => {
      const exts = Object.keys(EXT_FORMAT).filter((e) => EXT_FORMAT[e] === f);
      return exts.length ? exts : [f];
    })
    .map((e) => `.${e}`)
    .join(',');
}
