import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../electron/host/cli/main.ts';
import { capture, runCli as runBin } from '../cli.ts';

async function main(argv: string[]) {
  const out = capture();
  const err = capture();
  const code = await runCli(argv, { stdout: out.stream, stderr: err.stream, env: {}, home: '/nonexistent-home' });
  return { code, out: out.text(), err: err.text() };
}

describe('mediadesk without a command, and its help', () => {
  it('bare `mediadesk` is a usage error: the usage on stderr, nothing on stdout, exit 2', async () => {
    const r = await main([]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^usage: mediadesk <command> \[options\]\n/);
    expect(r.err).toMatch(/\n {2}jobs +List, retry or cancel/);
  });

  it('help asked for is output: stdout, exit 0', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const r = await main([flag]);
      expect(r.code, flag).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(/^usage: mediadesk <command> \[options\]\n/);
    }
  });

  it("help COMMAND is that command's --help; an unknown one is a usage error", async () => {
    const r = await main(['help', 'jobs']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toBe((await main(['jobs', '--help'])).out);
    expect(r.out).toMatch(/^usage: mediadesk jobs list/);
    const unknown = await main(['help', 'nope']);
    expect([unknown.code, unknown.out]).toEqual([2, '']);
    expect(unknown.err).toMatch(/unknown command "nope"/);
  });
});

describe('what the user typed, quoted in an error', () => {
  // A real process, as a script meets it: its stderr line is what a log or terminal shows.
  const home = mkdtempSync(join(tmpdir(), 'cli-main-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('is escaped on one whole line (newline, ESC), whichever command quotes it; exit 2', async () => {
    const cases: [string[], string][] = [
      [
        ['nope\u001b[2J'],
        'mediadesk: unknown command "nope\\x1b[2J" (try: run, tools, watch, jobs, report, presets, video, apps, loras, limits, prices, usage, creations, audit, team, key, doctor, report-problem, settings, open, integrate, sandbox)',
      ],
      [
        ['creations', '--page', '1\n'],
        'mediadesk creations: --page must be a whole number from 1 to 1000000, got "1\\n"',
      ],
      [
        ['usage', '--granularity', 'ho\nur'],
        'mediadesk usage: --granularity must be one of day, week, month, year, got "ho\\nur"',
      ],
      [['key', 'se\u001bt'], 'mediadesk key: unknown key command "se\\x1bt" (set, status, clear)'],
      [
        ['video', 'check', '--family', '2x\r', 'clip.mp4'],
        'mediadesk video: --family must be one of 2x, 25, 1x, lite, kling, wan, lip-sync, upscaler, image50-edit, got "2x\\r"',
      ],
    ];
    for (const [args, line] of cases) {
      const r = await runBin(args, { env: { MEDIADESK_HOME: home } });
      expect([r.code, r.out, r.err], JSON.stringify(args)).toEqual([2, '', `${line}\n`]);
    }
  });
});
