// `mediadesk key set` at a terminal: the CLI runs in a real pseudo-terminal (util-linux `script`),
// where it prompts without echo, and the user edits, ends or cancels the line there.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../electron/core/secrets.ts';
import { BIN, endChild, runCli } from '../cli.ts';

const home = mkdtempSync(join(tmpdir(), 'cli-key-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const hasScript = spawnSync('script', ['--version']).status === 0;
/** The keychain (gnome-keyring in a D-Bus session, as scripts/test.sh starts it) that stores a typed key. */
const hasBus = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
const env = { MEDIADESK_HOME: home, MEDIADESK_KEYCHAIN_SERVICE: `mediadesk-test-cli-key-${process.pid}` };

/** Terminals still open when a test ends, as after a prompt that never returned: closed, so the run ends. */
const running = new Set<ReturnType<typeof spawn>>();
afterEach(async () => {
  await Promise.all([...running].map((child) => endChild(child)));
});

/** Runs `mediadesk args…` on a terminal, types `keys` once the prompt shows, and waits for its exit. */
function atTerminal(args: string[], keys: string): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  // -e: script exits with the command's own exit code.
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
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

  it('Ctrl-D at an empty prompt is end of input: no key stored, exit 2 as for an empty pipe (it was taken as part of the key)', async () => {
    const r = await atTerminal(['key', 'set'], '\u0004');
    expect(r.code).toBe(2);
    expect(r.screen.replace(/\r/g, '')).toBe('API key: \nmediadesk key: no key typed; no key stored\n');
    const piped = await runCli(['key', 'set'], { env });
    expect([piped.code, piped.out, piped.err]).toEqual([
      2,
      '',
      'mediadesk key: no key given (standard input was empty); no key stored\n',
    ]);
  }, 30_000);

  it.skipIf(!hasBus)(
    'Ctrl-H and DEL erase, Ctrl-D after typed characters is ignored; the key stored is the one seen, never echoed',
    async () => {
      try {
        const r = await atTerminal(['key', 'set'], 'sk-typedX\bkey\u0004-42Y\u007f\r');
        const fp = keyFingerprint('sk-typedkey-42');
        expect(r.code, r.screen).toBe(0);
        expect(r.screen.replace(/\r/g, '')).toBe(`API key: \nAPI key ${fp} stored in the OS keychain\n`);
        expect((await runCli(['key', 'status'], { env })).out).toBe(
          `an API key is set (key ${fp}, stored in the OS keychain)\n`,
        );
      } finally {
        await runCli(['key', 'clear'], { env });
      }
    },
    30_000,
  );
});
