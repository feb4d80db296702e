import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { BIN, cliEnv, runCli } from '../cli.ts';
import { cleanup, control, tmp } from './helpers.ts';

let sandbox: RunningSandbox;
let home: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, taskDurationMs: 100 });
  home = tmp('cli');
});
afterAll(async () => {
  await sandbox.close();
  cleanup(home);
});

const cli = (args: string[], key = 'sandbox-owner', cwd?: string) =>
  runCli(args, { env: cliEnv(home, sandbox.url, key), cwd });
const posts = async (): Promise<number> =>
  (await control(sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run'] ?? 0;

describe('mediadesk apps | usage | creations', () => {
  it('apps list, show, and run with --input to downloaded results', async () => {
    // The list names apps by their `sqid` and says no output kind (the service's does not).
    const list = (await cli(['apps', 'list'])).out;
    expect(list.split('\n')[0]).toMatch(/^ID\s+COST\s+NAME\s*$/);
    expect(list).toMatch(/^pS7kQ2xa\s+12\s+Product shot studio\s*$/m);
    const show = (await cli(['apps', 'show', 'jM4nX8sc'])).out;
    expect(show.split('\n').slice(0, 2)).toEqual(['Jingle maker (jM4nX8sc)', 'cost: 8 credits per run']);
    // A select's choices and a number's bounds, from the inputs' `config`.
    expect(show).toMatch(/mood\s+select\s+no\s+upbeat\|calm\|epic/);
    expect(show).toMatch(/length_seconds\s+number\s+no\s+10\.\.60/);
    expect(show).toMatch(/brief\s+text\s+yes\s+up to 1000 chars/);
    const r = await cli([
      'apps',
      'run',
      'jM4nX8sc',
      '--input',
      'brief=a jingle',
      '--input',
      'length_seconds=12',
      '--yes',
      '--out',
      resolve(home, 'out'),
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/costs 8 credits/);
    expect(r.out.trim().split('\n').at(-1)).toMatch(/\/a-jingle_jingle-maker(-\d+)?\.mp3$/);
  });

  it('bad input exits 2 with one line; the Business key gets the plain Enterprise message', async () => {
    const bad = await cli(['apps', 'run', 'jM4nX8sc', '--input', 'length_seconds=999', '--yes']);
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n').at(-1)).toMatch(/brief is required; length_seconds must be at most 60/);
    expect((await cli(['usage', '--granularity', 'hour'])).code).toBe(2);
    const feb30 = await cli(['usage', '--granularity', 'day', '--from', '2026-02-30', '--to', '2026-03-05']);
    expect([feb30.code, feb30.err.trim()]).toEqual([
      2,
      expect.stringContaining('--from must be a real date YYYY-MM-DD, got "2026-02-30"'),
    ]);
    expect((await cli(['creations', '--page', '0'])).code).toBe(2);
    const biz = await cli(['apps', 'list'], 'sandbox-business');
    expect(biz.code).not.toBe(0);
    expect(biz.err).toMatch(/Enterprise plans only/);
  });

  it('an app id the server does not know is bad input (exit 2, one line), as an unknown job or run id is; nothing is paid', async () => {
    const before = await posts();
    for (const args of [
      ['apps', 'show', 'noSuchAp'],
      ['apps', 'run', 'noSuchAp', '--yes', '--input', 'scene=beach'],
    ]) {
      const r = await cli(args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([
        2,
        '',
        'mediadesk apps: no app noSuchAp (`mediadesk apps list` lists them)\n',
      ]);
    }
    expect(await posts()).toBe(before);
  });

  it('a file input that is a folder, no image or missing is refused locally with exit 2; nothing reaches the server', async () => {
    const dir = join(home, 'inputs');
    mkdirSync(join(dir, 'somefolder'), { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'not an image\n');
    writeFileSync(join(dir, 'fake.png'), 'text with an image name\n');
    const cases: [string, string][] = [
      ['notes.txt', `product_image is not an image file (PNG, JPEG or WebP): ${join(dir, 'notes.txt')}`],
      ['fake.png', `product_image is not an image file (PNG, JPEG or WebP): ${join(dir, 'fake.png')}`],
      ['somefolder', `product_image is a folder, not an image file (PNG, JPEG or WebP): ${join(dir, 'somefolder')}`],
      ['missing.png', `product_image names a file that does not exist: ${join(dir, 'missing.png')}`],
      ['missing.txt', `product_image names a file that does not exist: ${join(dir, 'missing.txt')}`],
    ];
    const before = await control(sandbox.url, 'stats');
    for (const [value, message] of cases) {
      const r = await cli(
        [
          'apps',
          'run',
          'pS7kQ2xa',
          '--yes',
          '--input',
          'scene=beach',
          '--input',
          `product_image=${value}`,
          '--out',
          join(home, 'aout'),
        ],
        'sandbox-owner',
        dir,
      );
      expect(r.code, value).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trim().split('\n').at(-1)).toBe(`mediadesk apps: ${message}`);
    }
    expect((await control(sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run']).toBe(
      before.requests['POST /v1/ai/flows/:appId/run'],
    );
  });

  it('Ctrl-C while an app runs says how to resume; the same command again follows that run to its results, and nothing is paid twice', async () => {
    const dir = join(home, 'ctrl-c');
    const image = join(dir, 'product.png');
    mkdirSync(dir, { recursive: true });
    await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 10, g: 120, b: 200 } } })
      .png()
      .toFile(image);
    const args = [
      'apps',
      'run',
      'pS7kQ2xa',
      '--yes',
      '--input',
      'scene=beach',
      '--input',
      `product_image=${image}`,
      '--out',
      join(dir, 'out'),
    ];
    const posts = async () => (await control(sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run'] ?? 0;
    const before = await posts();
    // Held on the server until Ctrl-C is in, however slow this machine is; then ended (tasks/finish).
    await control(sandbox.url, 'faults', { taskDurationMs: 600_000 });
    let first: { code: number | null; err: string };
    try {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, ...cliEnv(home, sandbox.url) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      let interrupted = false;
      child.stderr!.on('data', (d) => {
        err += d;
        if (interrupted || !/^running/m.test(err)) return;
        interrupted = true;
        child.kill('SIGINT');
      });
      first = await new Promise((res) => child.once('exit', (code) => res({ code, err })));
    } finally {
      await control(sandbox.url, 'faults', { taskDurationMs: 100 });
    }
    expect(first.code).toBe(130);
    const id =
      /stopped following run (\w{8}) \(running\); it continues on the server\. Run the same command again to resume it: it is not submitted or paid again\./.exec(
        first.err,
      )?.[1];
    expect(id, first.err).toBeDefined();
    const listed = JSON.parse((await cli(['apps', 'runs', '--json'])).out) as { id: string; state: string }[];
    expect(listed.find((r) => r.id.startsWith(id!))!.state).toBe('running');
    await control(sandbox.url, 'tasks/finish', {});

    // Following the earlier run pays nothing: no cost is shown, and no --yes is needed to accept one.
    const again = await cli(args.filter((x) => x !== '--yes'));
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(
      new RegExp(
        `^run ${id} resumed \\(running, already submitted\\): following the earlier run; it is not submitted or paid again \\(--new starts another\\)$`,
        'm',
      ),
    );
    expect(again.err).not.toMatch(/costs|credits/);
    const file = again.out.trim().split('\n').at(-1)!;
    // Named after the input image, as a tool's results are.
    expect(file).toMatch(/\/product_product-shot-studio(_\d+)?(-\d+)?\.png$/);
    expect(existsSync(file)).toBe(true);
    expect(await posts()).toBe(before + 1);
    expect((await cli(['apps', 'runs'])).out).toMatch(new RegExp(`^${id}  done `, 'm'));
  });

  it('apps run --timeout stops following after that long (exit 124, saying so); the run goes on and is not paid again', async () => {
    const out = join(home, 'timeout-out');
    const args = ['apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=a slow jingle', '--out', out];
    const before = await posts();
    await control(sandbox.url, 'faults', { taskDurationMs: 60_000 });
    try {
      const r = await cli([...args, '--timeout', '2s']);
      expect(r.code, r.err).toBe(124);
      const id =
        /^gave up after 2s \(--timeout\) following run (\w{8}) \(running\); it continues on the server\. Run the same command again to resume it: it is not submitted or paid again\./m.exec(
          r.err,
        )?.[1];
      expect(id, r.err).toBeDefined();
      expect(r.out).toBe(`run ${id} queued\n`);
      expect(
        (JSON.parse((await cli(['apps', 'runs', '--json'])).out) as { id: string; state: string }[]).find((x) =>
          x.id.startsWith(id!),
        )?.state,
      ).toBe('running');
      expect(await posts()).toBe(before + 1);
      const bad = await cli([...args, '--timeout', 'later']);
      expect([bad.code, bad.err.trim()]).toEqual([
        2,
        'mediadesk apps: --timeout must be a duration of at least 1 second, such as 90s, 10m or 2h, got "later"',
      ]);
      expect(await posts()).toBe(before + 1);
    } finally {
      await control(sandbox.url, 'faults', { taskDurationMs: 100 });
    }
  });

  it('apps cancel stops a run another terminal follows; apps retry follows it again to its results without paying again', async () => {
    const out = join(home, 'cancel-out');
    const before = await posts();
    // Held on the server until the cancel is in, however slow this machine is; then ended.
    await control(sandbox.url, 'faults', { taskDurationMs: 600_000 });
    let follower: Promise<{ code: number | null; out: string; err: string }>;
    let id = '';
    try {
      const child = spawn(
        process.execPath,
        [BIN, 'apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=cancel me', '--out', out],
        { env: { ...process.env, ...cliEnv(home, sandbox.url) }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      follower = new Promise((res) => child.once('exit', (code) => res({ code, out: stdout, err: stderr })));
      // Submitted: the run is on the server when the other terminal cancels it.
      await new Promise<void>((res) =>
        child.stderr!.on('data', (d) => {
          stderr += d;
          if (/^running/m.test(stderr)) res();
        }),
      );
      id = /^run (\w{8}) queued$/m.exec(stdout)![1];
    } finally {
      await control(sandbox.url, 'faults', { taskDurationMs: 100 });
    }
    const cancel = await cli(['apps', 'cancel', id]);
    expect([cancel.code, cancel.out]).toEqual([
      0,
      `run ${id} canceled (already submitted: the server may still charge it)\n`,
    ]);
    const followed = await follower;
    expect(followed.code).toBe(1);
    expect(followed.err).toMatch(
      /^canceled \(\w+\)\nCanceled; the run was already submitted and may still be charged\.$/m,
    );
    const again = await cli(['apps', 'cancel', id]);
    expect([again.code, again.err.trim()]).toEqual([
      2,
      expect.stringMatching(new RegExp(`^mediadesk apps: run ${id}[\\w-]+ is canceled; there is nothing to cancel$`)),
    ]);
    await control(sandbox.url, 'tasks/finish', {});

    // Submitted and paid: retry follows that run again, with no cost to accept and no new POST.
    const retry = await cli(['apps', 'retry', id]);
    expect(retry.code, retry.err).toBe(0);
    expect(retry.out).toMatch(
      new RegExp(`^run ${id} retried \\(running\\): following the submitted run again; nothing is paid again$`, 'm'),
    );
    expect(retry.err).not.toMatch(/costs|credits/);
    expect(retry.out.trim().split('\n').at(-1)).toMatch(/\/cancel-me_jingle-maker\.mp3$/);
    expect(await posts()).toBe(before + 1);
    expect((await cli(['apps', 'runs'])).out).toMatch(new RegExp(`^${id}  done `, 'm'));
  });

  it('apps retry sends a failed run anew only with its cost accepted; unknown runs and runs in the wrong state exit 2', async () => {
    const out = join(home, 'retry-out');
    await control(sandbox.url, 'faults', { failureRate: 1 });
    let failed: { code: number | null; out: string; err: string };
    try {
      failed = await cli(['apps', 'run', 'jM4nX8sc', '--yes', '--input', 'brief=fail first', '--out', out]);
    } finally {
      await control(sandbox.url, 'faults', { failureRate: 0 });
    }
    expect(failed.code).toBe(1);
    const id = /^run (\w{8}) queued$/m.exec(failed.out)![1];
    const before = await posts();

    const unasked = await cli(['apps', 'retry', id]);
    expect([unasked.code, unasked.err.trim().split('\n').at(-1)]).toEqual([
      2,
      'mediadesk apps: add --yes to accept the cost (no terminal to ask)',
    ]);
    expect(unasked.err).toMatch(/^Jingle maker costs 8 credits per run\.$/m);
    expect(await posts()).toBe(before);

    const retried = await cli(['apps', 'retry', id, '--yes', '--no-wait']);
    expect(retried.code, retried.err).toBe(0);
    expect(retried.out).toBe(`run ${id} retried (queued): sent again as a new run\n`);
    const followed = await cli(['apps', 'run', 'jM4nX8sc', '--input', 'brief=fail first', '--out', out]);
    expect(followed.code, followed.err).toBe(0);
    expect(followed.out).toMatch(new RegExp(`^run ${id} resumed`, 'm'));
    expect(await posts()).toBe(before + 1);

    const done = await cli(['apps', 'retry', id, '--yes']);
    expect([done.code, done.err.trim()]).toEqual([
      2,
      expect.stringMatching(/ is done; only failed, canceled or needs-attention runs can be retried$/),
    ]);
    const doneCancel = await cli(['apps', 'cancel', id]);
    expect([doneCancel.code, doneCancel.err.trim()]).toEqual([
      2,
      expect.stringMatching(/ is done; there is nothing to cancel$/),
    ]);
    for (const args of [
      ['apps', 'cancel', 'ffffffff'],
      ['apps', 'retry', 'not-a-run'],
      ['apps', 'retry', 'abc'],
    ]) {
      const r = await cli(args);
      expect([r.code, r.err.trim()], args.join(' ')).toEqual([
        2,
        `mediadesk apps: no app run ${args[2]} (\`mediadesk apps runs\` lists them)`,
      ]);
    }
    const bare = await cli(['apps', 'cancel']);
    expect([bare.code, bare.err.trim()]).toEqual([
      2,
      'mediadesk apps: apps cancel takes one run id (`mediadesk apps runs` lists them)',
    ]);
    expect(await posts()).toBe(before + 1);
  });

  /** An app run the Sandbox fails with `message` as its error. */
  async function failedRun(message: string, name: string) {
    await control(sandbox.url, 'faults', { failureRate: 1, appRunFailureMessage: message });
    try {
      return await cli(['apps', 'run', 'jM4nX8sc', '--yes', '--input', `brief=${name}`, '--out', join(home, name)]);
    } finally {
      await control(sandbox.url, 'faults', { failureRate: 0, appRunFailureMessage: null });
    }
  }

  it("a failed run's error from the server, with ESC, CR and newlines, is printed escaped on one line: it cannot clear the screen or forge lines", async () => {
    const r = await failedRun('step 2 failed\u001b[2J\rmediadesk: all done\nok', 'hostile-run');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^.*step 2 failed\\x1b\[2J\\rmediadesk: all done\\nok.*$/m);
    expect(r.err).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(r.err).not.toMatch(/^ok/m);
  });

  it("a failed run's error with C1 controls (U+009B, the 8-bit CSI; U+0085, NEL) is printed escaped as \\u009b, in the line and in apps runs --json; é, emoji and CJK stay as they are", async () => {
    const message = 'step 2 failed\u009b2J\u0085forged line · é 🎬 漢字';
    const r = await failedRun(message, 'c1-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain('step 2 failed\\u009b2J\\u0085forged line · é 🎬 漢字');
    expect(r.err).not.toMatch(/[\u007f-\u009f]/);
    const runs = await cli(['apps', 'runs', '--json']);
    expect(runs.code).toBe(0);
    expect(runs.out).toContain('step 2 failed\\u009b2J\\u0085forged line · é 🎬 漢字');
    expect(runs.out).not.toMatch(/[\u007f-\u009f]/);
    // Still JSON, which reads back as the server said it.
    expect((JSON.parse(runs.out) as { error: string | null }[]).some((x) => x.error?.includes(message))).toBe(true);
  });

  it("a failed run's error with line separators (U+2028, U+2029) and a bidi override (U+202E) is printed escaped as \\u2028, in the line and in apps runs --json; RTL letters stay as they are", async () => {
    const message = 'step 2 failed\u2028forged line\u2029another \u202Egnp.exe שלום';
    const r = await failedRun(message, 'separator-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain('step 2 failed\\u2028forged line\\u2029another \\u202egnp.exe שלום');
    expect(r.err).not.toMatch(/[\u2028\u2029\u202e]/);
    const runs = await cli(['apps', 'runs', '--json']);
    expect(runs.code).toBe(0);
    expect(runs.out).toContain('step 2 failed\\u2028forged line\\u2029another \\u202egnp.exe שלום');
    expect(runs.out).not.toMatch(/[\u2028\u2029\u202e]/);
    expect((JSON.parse(runs.out) as { error: string | null }[]).some((x) => x.error?.includes(message))).toBe(true);
  });

  it('a results folder named with a line separator and a bidi override is printed escaped on stdout by apps run and run (the files are where it says)', async () => {
    const odd = '\u2028x\u202Egnp.exe';
    const app = await cli([
      'apps',
      'run',
      'jM4nX8sc',
      '--input',
      'brief=a jingle',
      '--yes',
      '--out',
      join(home, `app${odd}`),
    ]);
    expect(app.code, app.err).toBe(0);
    expect(app.out).not.toMatch(/[\u2028\u202e]/);
    expect(app.out.trim().split('\n').at(-1)).toMatch(
      new RegExp(`/app\\\\u2028x\\\\u202egnp\\.exe/a-jingle_jingle-maker(-\\d+)?\\.mp3$`),
    );
    // Another key's creation: the creations tests below count the owner's.
    const made = await cli(
      ['run', 'hires', '--param', 'prompt=a lighthouse', '--param', 'resolution=1k', '--out', join(home, `run${odd}`)],
      'sandbox-admin',
    );
    expect(made.code, made.err).toBe(0);
    expect(made.out).not.toMatch(/[\u2028\u202e]/);
    expect(made.out.trim().split('\n').at(-1)).toBe(
      `1 of 1 done; results in ${join(home, 'run\\u2028x\\u202egnp.exe')}`,
    );
    expect(existsSync(join(home, `run${odd}`))).toBe(true);
  });

  it('apps runs with no runs yet says so on stderr: stdout, where rows go, stays empty', async () => {
    const fresh = await runCli(['apps', 'runs'], { env: cliEnv(join(home, 'no-runs'), sandbox.url) });
    expect([fresh.code, fresh.out, fresh.err]).toEqual([0, '', 'no app runs yet\n']);
  });

  it('apps runs refuses what it does not take', async () => {
    expect((await cli(['apps', 'runs', '--limit=0'])).err).toMatch(
      /--limit must be a whole number from 1 to 500, got "0"/,
    );
    const extra = await cli(['apps', 'runs', '--yes']);
    expect(extra.code).toBe(2);
    expect(extra.err).toMatch(/unknown option --yes/);
  });

  it('usage prints CSV and JSON with the budget on stderr; a repeated query is served from the cache', async () => {
    const csv = await cli([
      'usage',
      '--granularity',
      'week',
      '--from',
      '2025-01-01',
      '--to',
      '2025-01-31',
      '--group',
      '101',
      '--csv',
    ]);
    expect(csv.code).toBe(0);
    const lines = csv.out.trim().split('\r\n');
    expect(lines[0]).toBe('date,tool,uses,credits,days_from,days_to,partial');
    // 2025-01-01 is a Wednesday and the 31st a Friday: the first and last weeks are cut, and say so.
    const cover = (week: string) => [
      ...new Set(lines.filter((l) => l.startsWith(`${week},`)).map((l) => l.split(',').slice(-3).join(','))),
    ];
    expect(cover('2024-12-30')).toEqual(['2025-01-01,2025-01-05,true']);
    expect(cover('2025-01-06')).toEqual(['2025-01-06,2025-01-12,false']);
    expect(cover('2025-01-27')).toEqual(['2025-01-27,2025-01-31,true']);
    expect(csv.err).toMatch(/fetched; 99 of 100/);
    const again = await cli([
      'usage',
      '--granularity',
      'week',
      '--from',
      '2025-01-01',
      '--to',
      '2025-01-31',
      '--group',
      '101',
      '--json',
    ]);
    expect(JSON.parse(again.out).cached).toBe(true);
    expect(again.err).toMatch(/local cache .* 99 of 100/);
  });

  it('usage without --from asks for a range that suits the granularity, within 365 days, and says which', async () => {
    const cases: [string[], string, number, string][] = [
      [
        ['--granularity', 'month', '--to', '2026-03-31'],
        '2025-04-01 to 2026-03-31',
        12,
        'this month and the 11 before, as many as fit in 365 days',
      ],
      // 2024 is a leap year: its 12 months are 366 days, one more than the service takes.
      [
        ['--granularity', 'month', '--to', '2024-12-31'],
        '2024-02-01 to 2024-12-31',
        11,
        'this month and the 11 before, as many as fit in 365 days',
      ],
      [
        ['--granularity', 'week', '--to', '2025-11-23'],
        '2025-09-01 to 2025-11-23',
        12,
        'this week and the 11 before (weeks start on Monday)',
      ],
      [['--granularity', 'year', '--to', '2025-06-30'], '2025-01-01 to 2025-06-30', 1, 'this year so far'],
      [['--granularity', 'year', '--to', '2024-12-31'], '2024-01-02 to 2024-12-31', 1, 'this year so far'],
      [['--granularity', 'day', '--to', '2025-06-30'], '2025-06-24 to 2025-06-30', 7, 'the last 7 days'],
    ];
    for (const [args, range, buckets, says] of cases) {
      const r = await cli(['usage', ...args, '--json']);
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
      expect(JSON.parse(r.out).points, args.join(' ')).toHaveLength(buckets);
      expect(r.err, args.join(' ')).toMatch(
        new RegExp(
          `^${range} \\(no --from: ${says.replace(/[()]/g, '\\$&')}; --from and --to choose another range\\); fetched;`,
        ),
      );
    }
    // Up to today when --to is left out too; a range the user chose is said without the note.
    const month = JSON.parse((await cli(['usage', '--granularity', 'month', '--json'])).out);
    expect(month.request.start_date).toMatch(/-01$/);
    expect(month.points.length).toBeGreaterThanOrEqual(11);
    const chosen = await cli(['usage', '--granularity', 'month', '--from', '2025-01-01', '--to', '2025-03-31']);
    expect(chosen.err).toMatch(/^2025-01-01 to 2025-03-31; fetched;/);
  });

  it('creations lists the newest first, filtered by tool', async () => {
    const r = await cli(['creations', '--tool', 'context-t2i']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/page 1 of 1/);
  });

  it('a creation named by a prompt with ESC, CR, newline and BEL is listed escaped, on its one row: it cannot clear the screen or split the table', async () => {
    const prompt = '\u001b[2J\rgone\nsecond\u0007 line';
    const made = await cli([
      'run',
      'hires',
      '--param',
      `prompt=${prompt}`,
      '--param',
      'resolution=1k',
      '--out',
      join(home, 'hostile'),
    ]);
    expect(made.code, made.err).toBe(0);
    const r = await cli(['creations', '--tool', 'hires']);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/\s+hires\s+image\s+\\x1b\[2J\\rgone\\nsecond\\x07 line$/);
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  });
});
