import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../electron/host/cli/main.ts';

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

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

  it('help COMMAND is that command\'s --help; an unknown one is a usage error', async () => {
    const r = await main(['help', 'jobs']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toBe((await main(['jobs', '--help'])).out);
    expect(r.out).toMatch(/^usage: mediadesk jobs list/);
    const unknown = await main(['help', 'nope']);
    expect([unknown.code, unknown.out]).toEqual([2, '']);
    expect(unknown.err).toMatch(/unknown command "nope"/);
  });
});
