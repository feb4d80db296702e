// `mediadesk key set` at a terminal: the CLI runs in a real pseudo-terminal (util-linux `script`),
// where it prompts without echo, and the user presses Ctrl-C there.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../cli.ts';

const home = mkdtempSync(join(tmpdir(), 'cli-key-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const hasScript = spawnSync('script', ['--version']).status === 0;

/** Runs `mediadesk args…` on a terminal, types `keys` once the prompt shows, and waits for its exit. */
function atTerminal(args: string[], keys: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  // -e: script exits with the command's own exit code.
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, MEDIADESK_HOME: home, MEDIADESK_KEYCHAIN_SERVICE: 'mediadesk-test-cli-key' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let screen = '';
  let typed = false;
  child.stdout.on('data', (d) => {
    screen += d;
    if (!typed && screen.includes('API key: ')) typed = child.stdin.write(keys) || true;
  });
  return new Promise((res) => child.once('exit', (code) => res({ code, screen })));
}

describe.skipIf(!hasScript)('mediadesk key set at a terminal', () => {
  it('Ctrl-C at the prompt stores nothing and exits 130 (it said "cancelled", exit 2, and then hung)', async () => {
    const r = await atTerminal(['key', 'set'], 'abc\u0003');
    expect(r.code).toBe(130);
    expect(r.screen.replace(/\r/g, '')).toBe('API key: \nmediadesk key: cancelled; no key stored\n');
  }, 30_000);
});
