import { describe, expect, it } from 'vitest';
import { acceptsExtension, inputCheckOf } from '../../electron/core/batch/preflight.ts';
import { getTool } from '../../shared/catalogue/index.ts';
import { acceptList } from '../../shared/validation/extensions.ts';

/** One map of extensions: what the file picker offers is what the engine takes. */
describe('file extensions', () => {
  it('a JPEG by any of its names (.jpg .jpeg .jpe .jfif) is offered by the picker and taken by the engine', () => {
    expect(acceptList(['jpeg', 'png'])).toBe('.jpg,.jpeg,.jpe,.jfif,.png');
    expect(acceptList(['mp4', 'mov'])).toBe('.mp4,.mov');
    const check = inputCheckOf(getTool('upscaler-precision'))!;
    for (const ext of ['jpg', 'JPEG', 'jpe', 'jfif', 'png']) expect(acceptsExtension(check, ext), ext).toBe(true);
    for (const ext of ['gif', 'heic', 'txt']) expect(acceptsExtension(check, ext), ext).toBe(false);
  });
});
