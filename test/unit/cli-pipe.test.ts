import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../../bin/mediadesk.js');
const home = mkdtempSync(join(tmpdir(), 'md-cli-pipe-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('the CLI in a pipeline', () => {
  it('stops quietly when the reader has closed the pipe (`mediadesk ... | head -1`)', async () => {
    const child = spawn(process.execPath, [BIN, 'audit', 'status'], {
      env: { ...process.env, MEDIADESK_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader goes away before the CLI (still starting) writes a line.
    child.stdout.destroy();
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((r) => child.on('exit', r));
    expect(err).toBe('');
    expect(code).toBe(0);
  });
});
