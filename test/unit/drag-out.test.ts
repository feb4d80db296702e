import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MediaGate } from '../../electron/core/media-gate.ts';
import { checkDraggable } from '../../electron/core/open-file.ts';

/**
 * Dragging a result out of the gallery (Electron's startDrag) and the browser's download of it
 * hand a file to another app: only one MediaDesk wrote, in a folder it puts results in.
 */
describe('which files a drag out of the gallery may hand over', () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'md-drag-')));
  const home = join(root, 'home');
  const inputs = join(root, 'shoot');
  const outputs = join(root, 'results', 'upscaled');
  const elsewhere = join(root, 'elsewhere');
  for (const d of [home, inputs, outputs, elsewhere]) mkdirSync(d, { recursive: true });
  const result = join(outputs, 'a_upscaled.png');
  const input = join(inputs, 'a.png');
  const secret = join(elsewhere, 'private.png');
  for (const f of [result, input, secret]) writeFileSync(f, 'png');
  symlinkSync(secret, join(outputs, 'link.png'));
  symlinkSync(input, join(outputs, 'input-link.png'));
  // As the core: the renderer may show inputs and outputs of batches, but only outputs leave by drag.
  const gate = new MediaGate(home, () => [inputs, outputs]);
  const drag = (path: string) => checkDraggable(path, [outputs], gate);

  it('hands over a result in an output folder', () => {
    expect(drag(result)).toBe(result);
  });

  it('refuses an input, a file elsewhere and a link in the output folder to a file outside it', () => {
    expect(() => drag(input)).toThrow(`${input} is not a result MediaDesk wrote`);
    expect(() => drag(secret)).toThrow('is not a result MediaDesk wrote');
    expect(() => drag('/etc/passwd')).toThrow('is not a result MediaDesk wrote');
    expect(() => drag(join(outputs, 'link.png'))).toThrow(
      'is a link to a file outside the folders MediaDesk works with',
    );
    // The media gate lets the page show an input; as a drag it is still no result.
    expect(() => drag(join(outputs, 'input-link.png'))).toThrow('is not a result MediaDesk wrote');
    expect(() => drag(join(outputs, '..', '..', 'elsewhere', 'private.png'))).toThrow(
      'is not a result MediaDesk wrote',
    );
  });

  it('refuses a file of the output folder that is not a result type', () => {
    const script = join(outputs, 'run.sh');
    writeFileSync(script, '#!/bin/sh');
    expect(() => drag(script)).toThrow('is not a media file the app shows');
  });
});
