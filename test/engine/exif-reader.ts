import { afterAll } from 'vitest';
import { ExifTool, type Tags } from 'exiftool-vendored';

/**
 * A file's tags by group (`IFD0:Make`, `XMP-mediadesk:Tool`), read with the same library as it ships
 * but without the app's namespace declared, as any exiftool reads it; ended after the test file.
 */
export function exifReader(): (path: string) => Promise<Tags & Record<string, unknown>> {
  let reader: ExifTool | null = null;
  afterAll(() => reader?.end());
  return async (path) => {
    reader ??= new ExifTool({ maxProcs: 1 });
    return (await reader.read(path, ['-G1', '-n'])) as Tags & Record<string, unknown>;
  };
}
