import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { plannedOutputs, runParts } from '../../electron/core/apps/store.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { AUDIO_ASSET } from '../../electron/sandbox/render.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { BIN, cliEnv, runCli } from '../cli.ts';
import { until } from '../wait.ts';
import { control, rig, sandboxAndHomes, settled } from './helpers.ts';

// The `.part` files of workflow-app downloads: resumed by the next attempt or removed, never left
// behind; a user's own `.part` file beside them is never touched.

const at = sandboxAndHomes('parts', 100);
const home = (name: string) => at.home(name);
/** The jingle (18 KB) arrives in about 18 s: a download still under way when the test stops it. */
const STALLED = { slowDownloadBytesPerSec: 1000 };
const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);

/** Waits until the run's first result has a part with bytes in it. */
function partOf(
  read: () => (Parameters<typeof plannedOutputs>[0] & Parameters<typeof runParts>[0]) | null,
): Promise<string> {
  return until(
    () => {
      const r = read();
      const planned = r ? plannedOutputs(r) : [];
      return planned.length > 0 && size(runParts(r!, planned[0]).part) > 0 && runParts(r!, planned[0]).part;
    },
    { what: "a part of the run's first result" },
  );
}

/** Removal goes on beside the start: waited for, up to 10 s. */
async function gone(p: string): Promise<void> {
  await until(() => !existsSync(p), { what: `${p} removed`, timeout: 10_000 });
}

/** A user's unrelated part file in the same folder: it must survive every clean-up. */
function userPart(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, 'other.jpg.part');
  writeFileSync(p, 'a download of some other program');
  return p;
}

/**
 * Runs `mediadesk args…` on the shared Sandbox with its downloads stalled, and sends it `signal`
 * once the (only) `.mp3.part` in its folder holds `minBytes`: the part is named after the run id,
 * which the CLI does not print.
 */
async function stoppedMidDownload(h: string, args: string[], signal: NodeJS.Signals, minBytes: number) {
  const out = args[args.indexOf('--out') + 1];
  await control(at.url, 'faults', STALLED);
  try {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...cliEnv(h, at.url) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((res) => child.once('exit', res));
    const part = await until(
      () => {
        const found = readdirSync(out).find((f) => /\.mp3\.[\w-]+\.part$/.test(f));
        return found && size(join(out, found)) >= minBytes && join(out, found);
      },
      { what: `a part of ${minBytes} bytes`, log: () => stderr },
    );
    child.kill(signal);
    return { code: await exited, out: stdout, err: stderr, part };
  } finally {
    await control(at.url, 'faults', { slowDownloadBytesPerSec: 0 });
  }
}

async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

describe('parts of app-run downloads', () => {
  it('a run stopped mid-download on the built-in Sandbox: the next start removes its part, and the same run again completes; other.jpg.part stays', async () => {
    const h = home('builtin');
    const out = join(h, 'out');
    const openCore = (runQueue = true) =>
      createCore({
        home: h,
        host: 'cli',
        env: {},
        runQueue,
        secrets: new MemorySecretStore(),
        startSandbox: () => startSandbox({ port: 0, taskDurationMs: 100 }),
      });
    const req = {
      appId: 'jM4nX8sc',
      inputs: { brief: 'stopped mid-download' },
      confirmedCost: 8,
      outDir: out,
      resume: true,
    };
    const first = await openCore();
    let id = '';
    let part = '';
    try {
      await call(first, 'apps.list', {});
      await control((await first.backend.builtInSandboxUrl())!, 'faults', STALLED);
      id = (await call(first, 'apps.run', req)).id;
      part = await partOf(() => first.apps.store.get(id));
    } finally {
      // As Ctrl-C ends `mediadesk apps run`: the download is aborted and its Sandbox ends with it.
      await first.close();
    }
    expect(size(part)).toBeGreaterThan(0);
    const other = userPart(out);

    // As the CLI starts: the queue is taken only once the command follows the run.
    const next = await openCore(false);
    try {
      const again = await call(next, 'apps.run', req);
      expect([again.id, again.resumed, again.state]).toEqual([id, true, 'queued']);
      // Its results ended with their Sandbox: the run is sent again (a fresh Sandbox may even give it
      // the same run id), and the part of the lost results is removed before anything resumes it.
      await gone(part);
      next.engine.start();
      const done = await until(() => {
        const r = next.apps.one(id);
        return (r.state === 'done' || r.state === 'failed') && r;
      });
      expect(done.state, done.error ?? '').toBe('done');
      expect(readFileSync(done.outputs[0]).equals(readFileSync(AUDIO_ASSET))).toBe(true);
      expect(existsSync(part)).toBe(false);
      expect(readFileSync(other, 'utf8')).toBe('a download of some other program');
    } finally {
      await next.close();
    }
  });

  it('a download that failed leaves its part for Retry; the next start removes it, and never other.jpg.part', async () => {
    const h = home('failed');
    const out = join(h, 'out');
    const a = await rig({ sandbox: at.sandbox, home: h });
    let part = '';
    try {
      await control(at.url, 'faults', { truncateDownloads: true });
      const run = await a.services.apps.run({
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'cut short' },
        outDir: out,
      });
      const failed = await settled(a, run.id);
      expect([failed.state, failed.error]).toEqual(['failed', expect.stringMatching(/^Download failed: /)]);
      part = runParts(failed, plannedOutputs(failed)[0]).part;
      expect(size(part)).toBeGreaterThan(0);
    } finally {
      await control(at.url, 'faults', { truncateDownloads: false });
      await a.close();
    }
    const other = userPart(out);
    // The next process to take the queue (the app, the web host, a CLI command that follows work).
    const b = await rig({ sandbox: at.sandbox, home: h });
    try {
      await gone(part);
      expect(existsSync(other)).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('Cancel in the app during a download stops it and removes its part before it answers; other.jpg.part stays', async () => {
    const h = home('cancel');
    const out = join(h, 'out');
    const other = userPart(out);
    const r = await rig({ sandbox: at.sandbox, home: h });
    try {
      await control(at.url, 'faults', STALLED);
      const run = await r.services.apps.run({
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'cancel me mid-download' },
        outDir: out,
      });
      const part = await partOf(() => r.services.apps.store.get(run.id));
      const canceled = await r.services.apps.cancel(run.id);
      expect(canceled.state).toBe('canceled');
      expect(existsSync(part)).toBe(false);
      // Nothing writes it again after the answer: the download it stopped has ended.
      await r.services.apps.runner.settled();
      expect(existsSync(part)).toBe(false);
      expect(existsSync(other)).toBe(true);
    } finally {
      await control(at.url, 'faults', { slowDownloadBytesPerSec: 0 });
      await r.close();
    }
  });

  it("Ctrl-C during apps run's download keeps the part and says so; the same command again resumes it to the whole file; other.jpg.part stays", async () => {
    const h = home('cli-resume');
    const out = join(h, 'out');
    const other = userPart(out);
    const args = ['apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=resume my download', '--out', out];
    const first = await stoppedMidDownload(h, args, 'SIGINT', 2000);
    expect(first.code, first.err).toBe(130);
    expect(first.err.trim().split('\n').at(-1)).toMatch(
      /^stopped following run \w{8} \(downloading\); its download stops, and the part downloaded so far is kept for the next download of it to resume\. Run the same command again to resume it: it is not submitted or paid again\./,
    );
    const kept = size(first.part);
    expect(kept).toBeGreaterThanOrEqual(2000);

    // Slow again, so the part is seen growing from where it was, not starting over.
    await control(at.url, 'faults', { slowDownloadBytesPerSec: 4000 });
    let smallest = Infinity;
    const watch = setInterval(() => {
      const n = size(first.part);
      if (n > 0) smallest = Math.min(smallest, n);
    }, 10);
    try {
      const again = await runCli(args, { env: cliEnv(h, at.url) });
      expect(again.code, again.err).toBe(0);
      const file = again.out.trim().split('\n').at(-1)!;
      expect(readFileSync(file).equals(readFileSync(AUDIO_ASSET))).toBe(true);
    } finally {
      clearInterval(watch);
      await control(at.url, 'faults', { slowDownloadBytesPerSec: 0 });
    }
    expect(smallest).toBeGreaterThanOrEqual(kept);
    expect(existsSync(first.part)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });

  it('apps cancel of a run whose download a killed process left removes its part; other.jpg.part stays', async () => {
    const h = home('cli-cancel');
    const out = join(h, 'out');
    const other = userPart(out);
    // Killed, not stopped: nothing of it runs after this.
    const killed = await stoppedMidDownload(
      h,
      ['apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=killed mid-download', '--out', out],
      'SIGKILL',
      1,
    );
    expect(size(killed.part)).toBeGreaterThan(0);
    const id = /^run (\w{8}) queued$/m.exec(killed.out)![1];
    const cancel = await runCli(['apps', 'cancel', id], { env: cliEnv(h, at.url) });
    expect([cancel.code, cancel.out]).toEqual([
      0,
      `run ${id} canceled (already submitted: the server may still charge it)\n`,
    ]);
    expect(existsSync(killed.part)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });
});
