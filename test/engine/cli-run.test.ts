import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, interruptWhen, runCli } from '../cli.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { control, creates, jobsIn, makeImages, sandboxAndFolder } from './helpers.ts';
import { defaultsOf, getTool } from '../../shared/catalogue/index.ts';

/** `mediadesk run` as a script runs it: a child process against the Sandbox over HTTP. */
const at = sandboxAndFolder('cli-run', 100);

const cli = (args: string[], cwd = at.dir) => runCli(args, { env: cliEnv(join(at.dir, 'home'), at.url), cwd });

/**
 * --check's output without its cost line, checked for its count and credits (the price table's
 * figures are test/engine/estimate-budget.test.ts's); the upscaler has no published daily cap.
 */
function withoutEstimate(out: string, jobs: number): string {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.startsWith('Sends '));
  expect(lines[i]).toMatch(new RegExp(`^Sends ${jobs} paid jobs · [\\d,]+ credits \\(.+\\)$`));
  lines.splice(i, 1);
  return lines.join('\n');
}

/** stderr without its progress lines: what the run had to say about the inputs. */
const notes = (err: string) =>
  err
    .trimEnd()
    .split('\n')
    .filter((l) => !l.startsWith('progress '));

describe('mediadesk run: where results go, and nothing to do', () => {
  it('an output folder that is a file is refused before anything is paid; a relative --out is the shell folder’s', async () => {
    const input = join(at.dir, 'in');
    await makeImages(input, ['a.png']);
    writeFileSync(join(at.dir, 'afile'), 'x');
    const refused = await cli(['run', 'upscaler-precision', input, '--out', 'afile']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`output folder: ${join(at.dir, 'afile')} is a file, not a folder`);
    expect(creates(await control(at.url, 'stats'))).toBe(0);

    const work = join(at.dir, 'work');
    mkdirSync(work);
    const ran = await cli(['run', 'upscaler-precision', input, '--out', 'results'], work);
    expect(ran.code).toBe(0);
    expect(readdirSync(join(work, 'results'))).toEqual(['a_upscaler-precision.png']);
  });

  it('without --out, results go to the output folder of Settings (else the default one), in the tool’s folder, then the folder given', async () => {
    const input = join(at.dir, 'no-out');
    await makeImages(input, ['a.png']);
    const home = join(at.dir, 'home-no-out');
    const fallback = join(at.dir, 'MediaDesk ü');
    const env = { ...cliEnv(home, at.url), MEDIADESK_OUTPUT_DIR: fallback };
    const r = await runCli(['run', 'upscaler-precision', input], { env });
    expect(r.code, r.err).toBe(0);
    const ruled = join(fallback, 'Precision upscaler', 'no-out');
    expect(r.out.endsWith(`\n1 of 1 done; results in ${ruled}\n`)).toBe(true);
    expect(readdirSync(ruled)).toEqual(['a_upscaler-precision.png']);

    // A file given alone: straight into the tool's folder.
    const chosen = join(at.dir, 'chosen');
    expect((await runCli(['settings', 'set', `outputDir=${chosen}`], { env })).code).toBe(0);
    await makeImages(input, ['b.png']);
    expect((await runCli(['run', 'upscaler-precision', join(input, 'b.png')], { env })).code).toBe(0);
    expect(readdirSync(join(chosen, 'Precision upscaler'))).toEqual(['b_upscaler-precision.png']);
  });

  it('an empty folder, or only files the tool does not take, says so and exits non-zero without a batch', async () => {
    const empty = join(at.dir, 'empty');
    mkdirSync(empty);
    const none = await cli(['run', 'upscaler-precision', empty, '--out', join(at.dir, 'out1')]);
    expect(none.code).toBe(2);
    expect(none.err).toContain(`no files to process: ${empty} is an empty folder`);

    const texts = join(at.dir, 'texts');
    mkdirSync(texts);
    writeFileSync(join(texts, 'notes.txt'), 'not an image');
    const rejected = await cli(['run', 'upscaler-precision', texts, '--out', join(at.dir, 'out2')]);
    expect(rejected.code).toBe(1);
    expect(rejected.err).toContain(`rejected ${join(texts, 'notes.txt')}: this tool does not take .txt files`);
    expect(rejected.out.trim()).toBe('nothing queued, 1 rejected');
    expect(existsSync(join(at.dir, 'out2'))).toBe(false);
    // Only the first test's job: neither refusal left a job or an empty batch behind.
    expect(jobsIn(join(at.dir, 'home')).map((j) => j.inputPath)).toEqual([join(at.dir, 'in', 'a.png')]);
  });

  it('a file or folder that does not exist is bad input (exit 2), for a run and a check, before anything is paid', async () => {
    const gone = join(at.dir, 'no such folder');
    const before = creates(await control(at.url, 'stats'));
    for (const extra of [[], ['--check']]) {
      const r = await cli(['run', 'upscaler-precision', gone, '--out', join(at.dir, 'out-gone'), ...extra]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(`no such file or folder: ${gone}`);
    }
    expect(creates(await control(at.url, 'stats'))).toBe(before);
    expect(existsSync(join(at.dir, 'out-gone'))).toBe(false);
  });

  it('a finished batch run again ends 0, as its first run did, though its folder holds a file the tool does not take', async () => {
    const mixed = join(at.dir, 'mixed');
    await makeImages(mixed, ['a.png']);
    writeFileSync(join(mixed, 'notes.txt'), 'not an image');
    const args = ['run', 'upscaler-precision', mixed, '--out', join(at.dir, 'out-mixed')];
    const first = await cli(args);
    expect(first.code, first.err).toBe(0);
    const again = await cli(args);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`rejected ${join(mixed, 'notes.txt')}: this tool does not take .txt files`);
    expect(again.out).toContain('already done: nothing new to make (1 skipped, 1 rejected); results are in ');
  });

  it('--check says how many inputs are ready and names each one a run would skip, with why, and queues nothing', async () => {
    const shoot = join(at.dir, 'check-shoot');
    await makeImages(shoot, ['a.png', 'b.png']);
    writeFileSync(join(shoot, 'photo.png'), 'not an image');
    const out = join(at.dir, 'check-out');
    const before = creates(await control(at.url, 'stats'));
    const r = await cli(['run', 'upscaler-precision', shoot, '--out', out, '--check']);
    expect(r.code, r.err).toBe(0);
    expect(withoutEstimate(r.out, 2)).toBe(`2 ready, 1 will be skipped\nresults go to ${out}\n`);
    expect(notes(r.err)).toEqual([`rejected ${join(shoot, 'photo.png')}: is not a readable image`]);
    const json = await cli(['run', 'upscaler-precision', shoot, '--out', out, '--check', '--json']);
    const { estimate, ...checked } = JSON.parse(json.out);
    expect(checked).toEqual({
      ready: 2,
      resumed: 0,
      skipped: [],
      rejected: [{ path: join(shoot, 'photo.png'), reason: 'is not a readable image' }],
      renamed: [],
      outDir: out,
    });
    expect(estimate).toMatchObject({ title: 'Precision upscaler', creates: 2 });
    expect(creates(await control(at.url, 'stats'))).toBe(before);
    expect(existsSync(out)).toBe(false);
    expect(jobsIn(join(at.dir, 'home')).filter((j) => j.inputPath!.startsWith(shoot))).toEqual([]);
  });

  it('--check checks the parameters as the run does: one the tool refuses is named with its reason, exit 2, nothing queued', async () => {
    const shoot = join(at.dir, 'check-params');
    await makeImages(shoot, ['a.png', 'b.png', 'c.png']);
    const out = join(at.dir, 'check-params-out');
    const before = creates(await control(at.url, 'stats'));
    const args = ['run', 'upscaler-precision', shoot, '--out', out, '--param', 'scale_factor=17'];
    const checked = await cli([...args, '--check']);
    // The run refuses it the same way, with the same exit code.
    const ran = await cli(args);
    for (const r of [checked, ran]) {
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/^mediadesk run: Precision upscaler: scale_factor must be .*16/);
    }
    expect(checked.err).toBe(ran.err);
    expect(creates(await control(at.url, 'stats'))).toBe(before);
    expect(existsSync(out)).toBe(false);
    expect(jobsIn(join(at.dir, 'home')).filter((j) => j.inputPath!.startsWith(shoot))).toEqual([]);
    // A value it takes checks as before.
    const fine = await cli([...args.slice(0, -1), 'scale_factor=4', '--check']);
    expect(fine.code, fine.err).toBe(0);
    expect(withoutEstimate(fine.out, 3)).toBe(`3 ready\nresults go to ${out}\n`);
  });

  it('a tool run with only some parameters sends the catalogue defaults of the rest, as the Studio form does (music: its length)', async () => {
    // A home of its own: the other tests' job lists hold inputs only.
    const own = (args: string[]) => runCli(args, { env: cliEnv(join(at.dir, 'home-music'), at.url), cwd: at.dir });
    const r = await own([
      'run',
      'music',
      '--param',
      'prompt=calm piano at dusk',
      '--out',
      join(at.dir, 'music-out'),
      '--json',
    ]);
    expect(r.code, r.err).toBe(0);
    const [job] = JSON.parse(r.out).jobs;
    expect(job.state).toBe('done');
    const { taskId } = jobsIn(join(at.dir, 'home-music')).find((j) => j.id === job.id)!;
    // The create body as the Sandbox received it, before it applies defaults of its own.
    const task = await control(at.url, `tasks/${taskId}`);
    expect(task.tool).toBe('music');
    expect(task.sent).toEqual({
      prompt: 'calm piano at dusk',
      music_length_seconds: defaultsOf(getTool('music')).music_length_seconds,
    });
    expect(task.sent.music_length_seconds).toBe(30);
  });

  it('an end frame given as a local file with -p runs with the start frame of each input (i2v-endframe)', async () => {
    const home = join(at.dir, 'home-endframe');
    const [start, end] = await makeImages(join(at.dir, 'frames'), ['start.png', 'end.png'], 512);
    const r = await runCli(
      [
        'run',
        'i2v-endframe',
        start,
        '-p',
        `image_end=${end}`,
        '-p',
        'prompt=the tide comes in',
        '--out',
        join(at.dir, 'endframe-out'),
        '--json',
      ],
      { env: cliEnv(home, at.url), cwd: at.dir },
    );
    expect(r.code, r.err).toBe(0);
    const [job] = JSON.parse(r.out).jobs;
    expect(job?.state, r.out).toBe('done');
    const { taskId } = jobsIn(home).find((j) => j.id === job.id)!;
    const task = await control(at.url, `tasks/${taskId}`);
    expect(Object.keys(task.sent)).toEqual(expect.arrayContaining(['image', 'image_end', 'prompt']));
  });

  it('--json prints one report on stdout, per input in walk order with its result files; progress goes to stderr', async () => {
    const input = join(at.dir, 'json-in');
    await makeImages(input, ['b.png', 'sub/a.png']);
    writeFileSync(join(input, 'notes.txt'), 'not an image');
    const out = join(at.dir, 'json-out');
    const r = await cli(['run', 'upscaler-precision', input, '--out', out, '--json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report).toMatchObject({
      tool: 'upscaler-precision',
      outDir: out,
      total: 2,
      done: 2,
      queued: 2,
      resumed: 0,
      skipped: [],
    });
    expect(report.rejected).toEqual([{ path: join(input, 'notes.txt'), reason: 'this tool does not take .txt files' }]);
    expect(
      report.jobs.map((j: { input: string; state: string; outputs: string[] }) => [j.input, j.state, j.outputs]),
    ).toEqual([
      [join(input, 'b.png'), 'done', [join(out, 'b_upscaler-precision.png')]],
      [join(input, 'sub', 'a.png'), 'done', [join(out, 'sub', 'a_upscaler-precision.png')]],
    ]);
    expect(r.err).toContain('2 queued, 1 rejected');

    // Run again: both outputs exist, nothing is queued, and the report says which were skipped.
    const again = JSON.parse((await cli(['run', 'upscaler-precision', input, '--out', out, '--json'])).out);
    expect(again).toMatchObject({ batch: null, total: 0, jobs: [] });
    expect(again.skipped.map((x: { path: string }) => x.path)).toEqual([
      join(input, 'b.png'),
      join(input, 'sub', 'a.png'),
    ]);
  });

  it('a folder of links: each picture paid for once, under its real name; a broken link is named, not dropped', async () => {
    const shoot = join(at.dir, 'linked');
    await makeImages(shoot, ['a.png', 'picks/b.png']);
    symlinkSync(join(shoot, 'a.png'), join(shoot, 'a-copy.png'));
    symlinkSync(join(shoot, 'picks'), join(shoot, 'picks-link'));
    symlinkSync(shoot, join(shoot, 'picks', 'back-to-shoot'));
    symlinkSync(join(at.dir, 'nowhere.png'), join(shoot, 'gone.png'));
    const before = creates(await control(at.url, 'stats'));
    const r = await cli(['run', 'upscaler-precision', shoot, '--out', join(at.dir, 'out-linked')]);
    expect(r.err).toContain(`rejected ${join(shoot, 'gone.png')}: is a broken link (it no longer exists)`);
    expect(r.err).toContain(`skipped ${join(shoot, 'a-copy.png')}: is the same file as ${join(shoot, 'a.png')}`);
    // The folder walked twice and the link back into the shoot are named too, not passed over in silence.
    expect(r.err).toContain(
      `skipped ${join(shoot, 'picks', 'back-to-shoot')}: is a link back to ${shoot}, a folder it is inside (a loop): not walked again`,
    );
    expect(r.err).toContain(
      `skipped ${join(shoot, 'picks-link')}: is the same folder as ${join(shoot, 'picks')}, walked already`,
    );
    expect(r.out).toContain('2 queued, 3 skipped, 1 rejected');
    expect(creates(await control(at.url, 'stats')) - before).toBe(2);
    expect(readdirSync(join(at.dir, 'out-linked'), { recursive: true }).sort()).toEqual([
      'a_upscaler-precision.png',
      'picks',
      'picks/b_upscaler-precision.png',
    ]);
  });

  it('a file name with a newline stays on one line of output, so a script reading lines sees one entry per file', async () => {
    const odd = join(at.dir, 'odd');
    await makeImages(odd, ['two\nlines.png', 'tab\there.png']);
    writeFileSync(join(odd, 'notes\nfinal.txt'), 'x');
    const r = await cli(['run', 'upscaler-precision', odd, '--out', join(at.dir, 'out-odd')]);
    expect(r.code).toBe(0);
    expect(notes(r.err)).toEqual([`rejected ${odd}/notes\\nfinal.txt: this tool does not take .txt files`]);
    const again = await cli(['run', 'upscaler-precision', odd, '--out', join(at.dir, 'out-odd')]);
    expect(notes(again.err)).toEqual([
      `rejected ${odd}/notes\\nfinal.txt: this tool does not take .txt files`,
      `skipped ${odd}/tab\\there.png: its output ${join(at.dir, 'out-odd')}/tab_here_upscaler-precision.png already exists`,
      `skipped ${odd}/two\\nlines.png: its output ${join(at.dir, 'out-odd')}/two_lines_upscaler-precision.png already exists`,
    ]);
    const listed = (await cli(['jobs', 'list'])).out.trimEnd().split('\n');
    expect(listed.filter((l) => l.includes(odd))).toEqual([
      expect.stringMatching(new RegExp(`done\\s+upscaler-precision\\s+${odd}/tab\\\\there\\.png$`)),
      expect.stringMatching(new RegExp(`done\\s+upscaler-precision\\s+${odd}/two\\\\nlines\\.png$`)),
    ]);
  });

  it('stdout holds the batch and result lines alone, progress goes to stderr, and a pipe gets no escape codes', async () => {
    const input = join(at.dir, 'piped');
    await makeImages(input, ['a.png', 'b.png']);
    const out = join(at.dir, 'out piped ü');
    const r = await cli(['run', 'upscaler-precision', input, '--out', out]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.replace(/^batch [0-9a-f]{8}:/, 'batch ID:')).toBe(
      `batch ID: 2 queued\n2 of 2 done; results in ${out}\n`,
    );
    expect(r.err).toMatch(/^progress 2\/2: 2 done, 0 in flight$/m);
    // No bar redrawn in place, nor any other control character, on either stream of a pipe.
    expect(r.out + r.err).not.toMatch(/[\r\u001b]/);
  });

  // A progress line with a note in brackets: what the CLI says while the jobs wait, whatever it says.
  const WAIT_NOTE = /^progress .* queued \(.+\)$/m;

  it('a server that cannot be reached, or that asks to slow down, is named as such while the jobs wait', async () => {
    const input = join(at.dir, 'waiting');
    await makeImages(input, ['a.png']);
    // A port nothing listens on: the connection is refused, so nothing is sent or paid.
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    const unreachable = await interruptWhen(
      ['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-waiting')],
      {
        env: cliEnv(join(at.dir, 'home-unreachable'), `http://127.0.0.1:${port}`),
        until: WAIT_NOTE,
      },
    );
    expect(unreachable.code).toBe(130);
    expect(unreachable.err).toMatch(
      /^progress 0\/1: 0 done, 0 in flight, 1 queued \(waiting to submit again: cannot reach the server: it refused the connection \(ECONNREFUSED\)\)$/m,
    );
    expect(unreachable.err).not.toMatch(/rate limited/);

    await control(at.url, 'faults', { rate429: 1, retryAfterSec: 1 });
    try {
      const limited = await interruptWhen(['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-waiting')], {
        env: cliEnv(join(at.dir, 'home-429'), at.url),
        until: WAIT_NOTE,
      });
      expect(limited.code).toBe(130);
      expect(limited.err).toMatch(
        /\(waiting to submit again: the server's rate limit was reached \(HTTP 429 Too many requests\)\)$/m,
      );
    } finally {
      await control(at.url, 'faults', { rate429: 0 });
    }
  });

  it('--timeout gives up on a server that cannot be reached (exit 124, saying why); the same run later resumes it, paying once', async () => {
    const input = join(at.dir, 'timeout');
    await makeImages(input, ['a.png', 'b.png']);
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    const home = join(at.dir, 'home-timeout');
    const out = join(at.dir, 'out-timeout');
    const gaveUp = await runCli(['run', 'upscaler-precision', input, '--out', out, '--timeout', '1s'], {
      env: cliEnv(home, `http://127.0.0.1:${port}`),
    });
    expect(gaveUp.code).toBe(124);
    expect(notes(gaveUp.err).at(-1)).toBe(
      'gave up after 1s (--timeout): 0 of 2 done; still waiting: cannot reach the server: it refused the connection (ECONNREFUSED); ' +
        'the rest stay queued: run the same command again to resume (nothing is submitted twice)',
    );
    expect(existsSync(out)).toBe(false);

    // The server is back at that address; the same command takes up the batch's two queued jobs and pays each once.
    const back = await startSandbox({ port, taskDurationMs: 100 });
    try {
      const resumed = await runCli(['run', 'upscaler-precision', input, '--out', out, '--timeout', '5m'], {
        env: cliEnv(home, back.url),
      });
      expect(resumed.code, resumed.err).toBe(0);
      expect(resumed.out).toMatch(/^batch [0-9a-f]{8}: 0 queued, 2 resumed from an earlier run$/m);
      expect(readdirSync(out).sort()).toEqual(['a_upscaler-precision.png', 'b_upscaler-precision.png']);
      expect(creates(await control(back.url, 'stats'))).toBe(2);
    } finally {
      await back.close();
    }
  });

  it('a --timeout that is not a duration is bad input, refused before anything is queued', async () => {
    const input = join(at.dir, 'timeout-bad');
    await makeImages(input, ['a.png']);
    const NOT_A_DURATION = '--timeout must be a duration of at least 1 second, such as 90s, 10m or 2h, got';
    for (const [value, message] of [
      ['soon', `${NOT_A_DURATION} "soon"`],
      ['0', `${NOT_A_DURATION} "0"`],
      ['500ms', `${NOT_A_DURATION} "500ms"`],
      ['30d', '--timeout must be at most 24 days, got "30d"'],
    ]) {
      const r = await cli([
        'run',
        'upscaler-precision',
        input,
        '--out',
        join(at.dir, 'out-timeout-bad'),
        `--timeout=${value}`,
      ]);
      expect(r.code, value).toBe(2);
      expect(r.err.trim()).toBe(`mediadesk run: ${message}`);
    }
    expect(existsSync(join(at.dir, 'out-timeout-bad'))).toBe(false);
    expect(jobsIn(join(at.dir, 'home')).some((j) => j.inputPath!.includes('timeout-bad'))).toBe(false);
  });

  it('a re-run of a big folder names the first 20 skipped files and counts the rest', async () => {
    const big = join(at.dir, 'big');
    await makeImages(
      big,
      Array.from({ length: 23 }, (_, i) => `p${String(i).padStart(2, '0')}.png`),
    );
    const out = join(at.dir, 'out-big');
    expect((await cli(['run', 'upscaler-precision', big, '--out', out, '--concurrency', '8'])).code).toBe(0);
    const again = await cli(['run', 'upscaler-precision', big, '--out', out]);
    const lines = again.err.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('skipped '))).toHaveLength(20);
    expect(lines.at(-1)).toBe('… and 3 more skipped (--json lists every one)');
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe(`already done: nothing new to make (23 skipped); results are in ${out}\n`);
  });
});

describe('mediadesk run again: the same settings are already done, changed settings are new files', () => {
  it('a finished batch run again exits 0, says it is already done and where the results are, and pays for nothing', async () => {
    const shoot = join(at.dir, 'again-shoot');
    await makeImages(shoot, ['a.png', 'b.png']);
    const env = {
      ...cliEnv(join(at.dir, 'home-again'), at.url),
      MEDIADESK_OUTPUT_DIR: join(at.dir, 'MediaDesk again'),
    };
    const results = join(at.dir, 'MediaDesk again', 'Precision upscaler', 'again-shoot');
    const first = await runCli(['run', 'upscaler-precision', shoot], { env });
    expect(first.code, first.err).toBe(0);
    expect(first.out.endsWith(`2 of 2 done; results in ${results}\n`)).toBe(true);
    const before = creates(await control(at.url, 'stats'));
    const again = await runCli(['run', 'upscaler-precision', shoot], { env });
    expect(again.code, again.err).toBe(0);
    expect(again.out).toBe(`already done: nothing new to make (2 skipped); results are in ${results}\n`);
    expect(creates(await control(at.url, 'stats'))).toBe(before);
    const checked = await runCli(['run', 'upscaler-precision', shoot, '--check'], { env });
    expect(checked.out).toBe(`0 ready, 2 will be skipped\nresults go to ${results}\n`);
  });

  it('changed settings into the same --out make new files beside the earlier ones, said so; nothing overwritten or skipped', async () => {
    const shoot = join(at.dir, 'rescale');
    await makeImages(shoot, ['a.png', 'b.png']);
    const out = join(at.dir, 'rescale-out');
    const run = (scale: number, ...more: string[]) =>
      cli(['run', 'upscaler-precision', shoot, '--out', out, '--param', `scale_factor=${scale}`, ...more]);
    expect((await run(2)).code).toBe(0);
    const firstBytes = readdirSync(out).map((f) => readFileSync(join(out, f)));
    expect(readdirSync(out).sort()).toEqual(['a_upscaler-precision.png', 'b_upscaler-precision.png']);

    const checked = await run(4, '--check');
    expect(withoutEstimate(checked.out, 2)).toBe(
      `2 ready, 2 saved under new names (made before with other settings)\nresults go to ${out}\n`,
    );
    expect(notes(checked.err)).toEqual([
      `new name ${join(shoot, 'a.png')}: its result ${join(out, 'a_upscaler-precision.png')} was made with other settings; the new one is saved beside it under a new name`,
      `new name ${join(shoot, 'b.png')}: its result ${join(out, 'b_upscaler-precision.png')} was made with other settings; the new one is saved beside it under a new name`,
    ]);
    const four = await run(4);
    expect(four.code, four.err).toBe(0);
    expect(four.out).toMatch(
      /^batch [0-9a-f]{8}: 2 queued, 2 saved under new names \(made before with other settings\)\n/,
    );
    expect(readdirSync(out).sort()).toEqual([
      'a_upscaler-precision-2.png',
      'a_upscaler-precision.png',
      'b_upscaler-precision-2.png',
      'b_upscaler-precision.png',
    ]);
    expect(['a_upscaler-precision.png', 'b_upscaler-precision.png'].map((f) => readFileSync(join(out, f)))).toEqual(
      firstBytes,
    );
    // Each setting is done once: both runs again skip everything as already done.
    for (const scale of [2, 4])
      expect((await run(scale)).out).toContain('already done: nothing new to make (2 skipped)');
  });
});
