import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../electron/core/api/client.ts';
import { cliEnv, runCli } from '../cli.ts';
import { control, makeImages, sandboxAndFolder } from './helpers.ts';

/**
 * A server that takes a request and never answers (the Sandbox's `neverAnswer` fault): every wait
 * is bounded, and reads the result does not need (the team's usage) never hold up a command's end.
 * Each test waits for the command to end; its limit is well below the 155 s a command took before
 * the deadlines, and above what the optional reads' 10 s allow.
 */
const at = sandboxAndFolder('cli-unanswered', 50);
const cli = (args: string[]) => runCli(args, { env: cliEnv(join(at.dir, 'home'), at.url), cwd: at.dir });

afterEach(async () => {
  await control(at.url, 'faults', { neverAnswer: [] });
});

describe('a server that never answers', () => {
  it('the Sandbox takes the request and keeps it unanswered, per path or for all', async () => {
    await control(at.url, 'faults', { neverAnswer: ['/v1/analytics'] });
    const key = { baseUrl: at.url, apiKey: 'sandbox-owner' };
    const client = new ApiClient(() => key, { deadlineMs: 1500 });
    // Another path answers as usual.
    expect(await client.get('/v1/ai/loras')).toBeTruthy();
    await expect(client.query('/v1/analytics/team-credit-usage', {})).rejects.toMatchObject({
      kind: 'timeout',
      message: 'the server did not answer within 2 s',
    });
    await control(at.url, 'faults', { neverAnswer: ['*'] });
    await expect(client.get('/v1/ai/loras')).rejects.toMatchObject({ kind: 'timeout' });
    // A read let go by its owner fails at once, as stopped.
    const pending = client.get('/v1/ai/loras', undefined, { deadlineMs: 60_000 });
    client.abortReads();
    await expect(pending).rejects.toMatchObject({ kind: 'timeout', message: 'stopped before the server answered' });
    const refused = await fetch(`${at.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ neverAnswer: ['v1'] }),
    });
    expect(refused.status).toBe(400);
  });

  it('run ends as soon as its jobs are done, though the usage behind its price never answers', async () => {
    await control(at.url, 'faults', { neverAnswer: ['/v1/analytics'] });
    const input = join(at.dir, 'in');
    await makeImages(input, ['a.png']);
    const r = await cli(['run', 'upscaler-precision', input, '--out', join(at.dir, 'out'), '--timeout', '30s']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/1 of 1 done; results in /);
  }, 30_000);

  it('run --check prices without the usage, and report ends saying the usage did not answer', async () => {
    const input = join(at.dir, 'in-check');
    await makeImages(input, ['a.png']);
    const ran = await cli(['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-check'), '--json']);
    expect(ran.code, ran.err).toBe(0);
    const batch = JSON.parse(ran.out).batch as string;
    await makeImages(input, ['b.png']);

    await control(at.url, 'faults', { neverAnswer: ['/v1/analytics'] });
    const home = join(at.dir, 'home-fresh');
    const fresh = (args: string[]) => runCli(args, { env: cliEnv(home, at.url), cwd: at.dir });
    const checked = await fresh(['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-check2'), '--check']);
    expect(checked.code, checked.err).toBe(0);
    // The estimate is priced by the price table, so it never waits on the usage that does not answer.
    expect(checked.out).toMatch(/Sends 2 paid jobs · 10 credits/);

    // The usage's deadline shortened from 10 s to 1 s: what is said past it is the same.
    const report = await runCli(['report', batch], {
      env: { ...cliEnv(join(at.dir, 'home'), at.url), MEDIADESK_OPTIONAL_READ_MS: '1000' },
      cwd: at.dir,
    });
    expect(report.code, report.err).toBe(0);
    expect(report.out).toContain('did not answer within 1 s');
  }, 45_000);
});
