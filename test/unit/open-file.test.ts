import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkOpenableFolder, openWithOs } from '../../electron/core/open-file.ts';

/**
 * Opening a result with the OS from the web host (Linux: xdg-open). The opener is the one
 * program here that is not ours: each case puts its own xdg-open first on PATH, a script that
 * records its arguments and answers as the real one does.
 */
const dir = mkdtempSync(join(tmpdir(), 'md-open-'));
const file = join(dir, 'result.png');
writeFileSync(file, 'png');
const realPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = realPath;
});

function opener(exitCode: number): string {
  const bin = mkdtempSync(join(dir, 'bin-'));
  const log = join(bin, 'args');
  writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\necho "$@" > ${JSON.stringify(log)}\nexit ${exitCode}\n`);
  chmodSync(join(bin, 'xdg-open'), 0o755);
  process.env.PATH = `${bin}:/usr/bin:/bin`;
  return log;
}

describe.runIf(process.platform === 'linux')('opening a result with the OS', () => {
  it('hands the file (or, to show it, its folder) to xdg-open', async () => {
    const log = opener(0);
    await openWithOs(file);
    expect(readFileSync(log, 'utf8').trim()).toBe(file);
    await openWithOs(file, 'reveal');
    expect(readFileSync(log, 'utf8').trim()).toBe(dirname(file));
  });

  it('says plainly where to go when xdg-open fails, or is not installed, never its exit code', async () => {
    opener(3);
    await expect(openWithOs(file)).rejects.toThrow(
      `Could not open an application for this file here. The file is: ${file}`,
    );
    await expect(openWithOs(file, 'reveal')).rejects.toThrow(
      `Could not open a file manager here. The folder is: ${dirname(file)}`,
    );
    process.env.PATH = mkdtempSync(join(dir, 'empty-'));
    await expect(openWithOs(dir, 'folder')).rejects.toThrow(
      `Could not open a file manager here. The folder is: ${dir}`,
    );
  });
});

describe('which folders the renderer may have opened', () => {
  const root = join(dir, 'MediaDesk');
  const batchFolder = join(dir, 'typed results');
  const folders = [root, batchFolder];

  it('the output folder and the folders results go to, and folders inside them; a missing one in the output folder is made', () => {
    const rule = join(root, 'Precision upscaler', 'shoot');
    expect(checkOpenableFolder(rule, folders, root)).toBe(rule);
    expect(statSync(rule).isDirectory()).toBe(true);
    mkdirSync(batchFolder);
    expect(checkOpenableFolder(join(batchFolder, '.'), folders, root)).toBe(batchFolder);
  });

  it('nothing else: not a folder outside them, nor a file, nor one gone from a typed folder', () => {
    expect(() => checkOpenableFolder(join(root, '..', 'elsewhere'), folders, root)).toThrow(
      `${join(dir, 'elsewhere')} is not a folder MediaDesk puts results in, so it is not opened`,
    );
    expect(() => checkOpenableFolder(join(batchFolder, 'gone'), folders, root)).toThrow(
      `${join(batchFolder, 'gone')} does not exist (moved or deleted since)`,
    );
    writeFileSync(join(root, 'notes.txt'), 'x');
    expect(() => checkOpenableFolder(join(root, 'notes.txt'), folders, root)).toThrow('is not a folder');
  });
});
