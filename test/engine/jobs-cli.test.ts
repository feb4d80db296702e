// `mediadesk jobs list` as a user runs it: a real process over a real queue database and Sandbox.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cliEnv, interruptWhen, runCli } from '../cli.ts';
import { cleanup, control, creates, engineFor, jobsIn, makeImages, settle, tmp } from './helpers.ts';

let sandbox: RunningSandbox;
let dir: string;

/** Three jobs that end done and one that ends failed, in the CLI's data folder. */
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, taskDurationMs: 50 });
  dir = tmp('jobs-cli');
  const engine = engineFor(join(dir, 'home'), sandbox.url);
  try {
    engine.start();
    const ok = await engine.startBatch({
      tool: 'upscaler-precision',
      inputs: await makeImages(join(dir, 'ok'), ['a.png', 'b.png', 'c.png']),
      params: {},
      outDir: join(dir, 'out'),
    });
    await settle(engine, ok.jobIds);
    await control(sandbox.url, 'faults', { failureRate: 1 });
    const bad = await engine.startBatch({
      tool: 'upscaler-precision',
      inputs: await makeImages(join(dir, 'bad'), ['d.png']),
      params: {},
      outDir: join(dir, 'out'),
    });
    await settle(engine, bad.jobIds);
  } finally {
    await engine.close();
  }
});
afterAll(async () => {
  await sandbox.close();
  cleanup(dir);
});

const cli = (args: string[]) => runCli(args, { env: cliEnv(join(dir, 'home'), sandbox.url) });

const jobLines = (out: string) => out.trim().split('\n');

describe('mediadesk jobs list', () => {
  it('--batch takes a batch id or its first characters, and names one it does not know', async () => {
    const all = await cli(['jobs', 'list', '--json']);
    const { jobs } = JSON.parse(all.out) as { jobs: { batchId: string; state: string }[] };
    const failedBatch = jobs.find((j) => j.state === 'failed')!.batchId;
    const r = await cli(['jobs', 'list', '--batch', failedBatch.slice(0, 8), '--json']);
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { jobs: { batchId: string }[] }).jobs.map((j) => j.batchId)).toEqual([failedBatch]);
    const none = await cli(['jobs', 'list', '--batch', 'ffffffff']);
    expect([none.code, none.err.trim()]).toEqual([2, 'mediadesk jobs: no batch ffffffff']);
  });

  it('filters with --opt value and --opt=value alike', async () => {
    for (const args of [['--state', 'failed'], ['--state=failed']]) {
      const r = await cli(['jobs', 'list', ...args]);
      expect(r.code, r.err).toBe(0);
      expect(jobLines(r.out)).toHaveLength(1);
      expect(jobLines(r.out)[0]).toMatch(/^\S{8}\s+failed\s/);
      // The words the Queue's job detail shows, what happened and what to do.
      expect(jobLines(r.out)[0]).toMatch(
        /d\.png  - The task failed on the server \(nothing to download\)\. Retry submits it again \(a new task\)\.$/,
      );
      expect(r.err).toBe('1 of 1 jobs\n');
    }
    const limited = await cli(['jobs', 'list', '--limit=2']);
    expect(limited.code, limited.err).toBe(0);
    expect(jobLines(limited.out)).toHaveLength(2);
    expect(limited.err).toBe('2 of 4 jobs\n');
    expect(JSON.parse((await cli(['jobs', 'list', '--state=done', '--json'])).out).total).toBe(3);
  });

  it('stdout holds job rows only, so a pipeline of ids gets no count line; the count goes to stderr', async () => {
    const all = await cli(['jobs', 'list']);
    expect(
      all.out
        .trim()
        .split('\n')
        .filter((l) => !/^[0-9a-f]{8}  \S/.test(l)),
    ).toEqual([]);
    expect(all.out.trim().split('\n')).toHaveLength(4);
    expect(all.err).toBe('4 of 4 jobs\n');
    const none = await cli(['jobs', 'list', '--state', 'canceled']);
    expect([none.code, none.out, none.err]).toEqual([0, '', '0 of 0 jobs\n']);
  });

  it('rejects unknown options, stray arguments and bad values with exit 2 and one line', async () => {
    const cases: [string[], RegExp][] = [
      [['--stat', 'failed'], /unknown option --stat$/],
      [['--bogus'], /unknown option --bogus$/],
      [['failed'], /jobs list takes no arguments, got "failed"$/],
      [['--state=broken'], /--state must be one of queued, .*needs_attention, got "broken"$/],
      [
        ['--limit=2x'],
        /--limit must be a whole number from 1 to 1000, got "2x" \(--all lists every job, --offset N pages\)$/,
      ],
      [['--limit'], /--limit needs a value$/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(['jobs', 'list', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err.trim()).toMatch(message);
    }
  });

  it('retry and cancel take exactly one job id and no unknown options', async () => {
    expect((await cli(['jobs', 'cancel'])).err).toMatch(/jobs cancel needs a job id/);
    const extra = await cli(['jobs', 'retry', 'abc', '--bogus']);
    expect(extra.code).toBe(2);
    expect(extra.err).toMatch(/unknown option --bogus/);
  });
});

describe('mediadesk jobs retry', () => {
  it('prints the job and its state on stdout, and its progress on stderr', async () => {
    const failed = JSON.parse((await cli(['jobs', 'list', '--state=failed', '--json'])).out).jobs[0].id as string;
    await control(sandbox.url, 'reset', {});
    const r = await cli(['jobs', 'retry', failed.slice(0, 8)]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${failed.slice(0, 8)} queued\n`);
    expect(r.err).toMatch(/^progress 1\/1: 1 done, 0 in flight$/m);
  });
});

describe('mediadesk jobs retry of an old failed job', () => {
  it('is not paid again when a later run already made its input with the same settings (no -2 file)', async () => {
    const input = join(dir, 'later', 'h.png');
    const engine = engineFor(join(dir, 'home'), sandbox.url);
    let failed: string;
    try {
      engine.start();
      await control(sandbox.url, 'faults', { failureRate: 1 });
      const first = await engine.startBatch({
        tool: 'upscaler-precision',
        inputs: await makeImages(join(dir, 'later'), ['h.png']),
        params: {},
        outDir: join(dir, 'out'),
      });
      await settle(engine, first.jobIds);
      failed = first.jobIds[0];
      await control(sandbox.url, 'reset', {});
      const later = await engine.startBatch({
        tool: 'upscaler-precision',
        inputs: [input],
        params: {},
        outDir: join(dir, 'out'),
      });
      await settle(engine, later.jobIds);
      expect(engine.jobRows(later.jobIds)[0].state).toBe('done');
    } finally {
      await engine.close();
    }
    await control(sandbox.url, 'reset', {});
    const r = await cli(['jobs', 'retry', failed.slice(0, 8)]);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe(
      `mediadesk jobs: job ${failed} is not sent again: a later job already made ${join(dir, 'out', 'h_upscaler-precision.png')} from its input with the same settings; delete that result to make it anew`,
    );
    expect(creates(await control(sandbox.url, 'stats'))).toBe(0);
    expect(readdirSync(join(dir, 'out')).filter((n) => n.startsWith('h_'))).toEqual(['h_upscaler-precision.png']);
  });
});

describe('mediadesk jobs retry, interrupted', () => {
  /** A job of `input` that failed on the server (a Sandbox fault), for a retry to follow; the Sandbox's counts start again. */
  async function failedJob(input: string, name: string): Promise<string> {
    const engine = engineFor(join(dir, 'home'), sandbox.url);
    try {
      await control(sandbox.url, 'faults', { failureRate: 1 });
      engine.start();
      const bad = await engine.startBatch({
        tool: 'upscaler-precision',
        inputs: await makeImages(input, [name]),
        params: {},
        outDir: join(dir, 'out'),
      });
      await settle(engine, bad.jobIds);
      return bad.jobIds[0];
    } finally {
      await engine.close();
      await control(sandbox.url, 'reset', {});
    }
  }

  it('--timeout stops following after that long: exit 124, saying so; the job stays submitted and is not sent again', async () => {
    const id = await failedJob(join(dir, 'timed-out'), 'g.png');
    await control(sandbox.url, 'faults', { taskDurationMs: 60_000 });
    try {
      expect((await cli(['jobs', 'retry', id.slice(0, 8), '--timeout', '1', '--no-wait'])).err.trim()).toBe(
        'mediadesk jobs: give --no-wait or --timeout, not both',
      );
      const r = await cli(['jobs', 'retry', id.slice(0, 8), '--timeout', '1']);
      expect(r.code, r.err).toBe(124);
      expect(r.err).toMatch(
        new RegExp(
          `^gave up after 1s \\(--timeout\\) following job ${id.slice(0, 8)} \\(running\\); it stays in the queue and nothing submitted is sent again: `,
          'm',
        ),
      );
      const job = jobsIn(join(dir, 'home')).find((j) => j.id === id && j.state === 'running');
      expect(job?.taskId).toBeTruthy();
      expect(creates(await control(sandbox.url, 'stats'))).toBe(1);
    } finally {
      await control(sandbox.url, 'faults', { taskDurationMs: 50 });
    }
  });

  it('Ctrl-C stops following, not the job: it exits 130, the job is not sent again, and `run` over its input follows it to its result', async () => {
    const input = join(dir, 'interrupted');
    const id = await failedJob(input, 'e.png');
    // Long enough a task that Ctrl-C comes while it runs on the server.
    await control(sandbox.url, 'faults', { taskDurationMs: 5000 });
    const r = await interruptWhen(['jobs', 'retry', id.slice(0, 8)], {
      env: cliEnv(join(dir, 'home'), sandbox.url),
      until: /^progress 0\/1: 0 done, 1 in flight$/m,
    });
    expect(r.code, r.err).toBe(130);
    expect(r.err).toMatch(
      new RegExp(
        `^stopped following job ${id.slice(0, 8)} \\(running\\); it stays in the queue and nothing submitted is sent again: `,
        'm',
      ),
    );
    const job = jobsIn(join(dir, 'home')).find((j) => j.id === id && j.state === 'running');
    expect(job?.taskId).toBeTruthy();

    await control(sandbox.url, 'faults', { taskDurationMs: 50 });
    const resumed = await cli(['run', 'upscaler-precision', input, '--out', join(dir, 'out')]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toContain('0 queued, 1 resumed from an earlier run');
    // The retry's one create: neither Ctrl-C nor the resume sent the job again.
    expect(creates(await control(sandbox.url, 'stats'))).toBe(1);
  });
});

describe('mediadesk jobs list over a queue of more than one page', () => {
  const N = 1003;
  let big: string;
  let inputs: string[];
  beforeAll(async () => {
    big = join(dir, 'big');
    inputs = await makeImages(
      join(big, 'in'),
      Array.from({ length: N }, (_, i) => `p${String(i).padStart(4, '0')}.png`),
      8,
    );
    const engine = engineFor(join(big, 'home'), sandbox.url);
    try {
      // Queued only: listing needs jobs, not results.
      expect(
        (
          await engine.startBatch({
            tool: 'upscaler-precision',
            inputs: [join(big, 'in')],
            params: {},
            outDir: join(big, 'out'),
          })
        ).queued,
      ).toBe(N);
    } finally {
      await engine.close();
    }
  });
  const listBig = (args: string[]) =>
    runCli(['jobs', 'list', ...args], { env: cliEnv(join(big, 'home'), sandbox.url) });

  it('--all lists every job in queue order, past the 1000 a page holds; --offset pages', async () => {
    const all = await listBig(['--all', '--json']);
    expect(all.code, all.err).toBe(0);
    const report = JSON.parse(all.out) as { total: number; jobs: { input: string }[] };
    expect(report.total).toBe(N);
    expect(report.jobs.map((j) => j.input)).toEqual(inputs);

    const text = await listBig(['--all']);
    expect(text.out.trimEnd().split('\n')).toHaveLength(N);
    expect(text.err).toBe(`${N} of ${N} jobs\n`);

    const rest = await listBig(['--offset', '1000', '--json']);
    expect(JSON.parse(rest.out).jobs.map((j: { input: string }) => j.input)).toEqual(inputs.slice(1000));
    const middle = await listBig(['--offset=999', '--limit=2']);
    expect(
      middle.out
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/^[0-9a-f]{8}  queued +upscaler-precision /, '')),
    ).toEqual(inputs.slice(999, 1001));
  });

  it('a --limit past one page says how to get more; --all and --limit together are refused', async () => {
    const over = await listBig(['--limit', '5000']);
    expect([over.code, over.out, over.err]).toEqual([
      2,
      '',
      'mediadesk jobs: --limit must be a whole number from 1 to 1000, got "5000" (--all lists every job, --offset N pages)\n',
    ]);
    const both = await listBig(['--all', '--limit', '5']);
    expect([both.code, both.err]).toEqual([2, 'mediadesk jobs: give --limit or --all, not both\n']);
    expect((await listBig(['--offset', 'x'])).err).toBe('mediadesk jobs: --offset must be a whole number, got "x"\n');
  });
});
