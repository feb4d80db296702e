import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lettingGo, runCli } from '../cli.ts';

// The suite runs most CLI commands in the test's own process (test/cli.ts): what would keep a command's own
// process from exiting must fail the call there, and what a process lets go of must not.
describe('a command run in the test process must let go of what it opened', () => {
  it('a timer or an interval still set when it returns fails the call, naming it', async () => {
    let timer: NodeJS.Timeout | undefined;
    await expect(
      lettingGo(
        'mediadesk x',
        async () => {
          timer = setInterval(() => {}, 60_000); // not a wait: a timer left set for the check to find
        },
        200,
      ),
    ).rejects.toThrow('mediadesk x returned but left open: Timeout');
    clearInterval(timer);
  });

  it('a socket left connected fails it; one closed, or unref-ed as idle keep-alive sockets are, does not', async () => {
    const server = createServer((s) => s.on('error', () => {})).listen(0, '127.0.0.1');
    await new Promise((res) => server.once('listening', res));
    const { port } = server.address() as AddressInfo;
    const open = (): Promise<ReturnType<typeof connect>> =>
      new Promise((res) => {
        const s = connect(port, '127.0.0.1', () => res(s));
      });
    let left: ReturnType<typeof connect> | undefined;
    await expect(lettingGo('mediadesk y', async () => void (left = await open()), 200)).rejects.toThrow(
      'left open: TCPWRAP',
    );
    left!.destroy();
    await expect(
      lettingGo('mediadesk z', async () => {
        (await open()).destroy();
        (await open()).unref();
        return 7;
      }),
    ).resolves.toBe(7);
    server.close();
  });

  it('a child process still running fails it; one waited for does not', async () => {
    let child: ReturnType<typeof spawn> | undefined;
    await expect(
      lettingGo(
        'mediadesk w',
        async () => void (child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'])), // not a wait: a child left running, killed below
        200,
      ),
    ).rejects.toThrow('left open: PROCESSWRAP');
    child!.kill();
    await lettingGo('mediadesk v', async () => {
      const c = spawn(process.execPath, ['-e', '0']);
      await new Promise((res) => c.once('close', res));
    });
  });
});

describe('a command run in the test process answers as in its own', () => {
  const home = mkdtempSync(join(tmpdir(), 'md-cli-in-process-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const env = { MEDIADESK_HOME: home, MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: 'k' };

  it.each([
    [['--help']],
    [['jobs', 'list']],
    [['settings', 'get', 'concurrency']],
    [['settings', 'set', 'concurrency=99']],
    [['runn']],
    [['run', 'upscaler-precision', join(home, 'nothing-here')]],
  ])('mediadesk %j: the same exit code, output and errors', async (args) => {
    const here = await runCli(args, { env });
    const own = await runCli(args, { env, ownProcess: true });
    expect(here).toEqual(own);
  });
});
