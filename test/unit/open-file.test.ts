import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWithOs } from '../../electron/core/open-file.ts';

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
    await openWithOs(file, true);
    expect(readFileSync(log, 'utf8').trim()).toBe(dirname(file));
  });

  it('says so when xdg-open fails, or is not installed, instead of doing nothing', async () => {
    opener(3);
    await expect(openWithOs(file)).rejects.toThrow(
      `xdg-open could not open ${file} (exit code 3); is an application set up for .png files?`,
    );
    process.env.PATH = mkdtempSync(join(dir, 'empty-'));
    await expect(openWithOs(file)).rejects.toThrow(`cannot open files here: xdg-open is not installed (${file})`);
  });
});
