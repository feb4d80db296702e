import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppFamilies } from '../../electron/core/apps/family.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cliEnv, runCli } from '../cli.ts';
import { cleanup, control, rig, settled, tmp, type Rig } from './helpers.ts';

// Workflow apps are `flows` in the newer official description and `apps` before it: the app asks flows,
// falls back to apps where flows answers 404, and remembers per backend which answered.

let sandbox: RunningSandbox;
const homes: string[] = [];
const home = () => {
  const h = tmp('flows');
  homes.push(h);
  return h;
};
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, taskDurationMs: 100 });
});
afterAll(async () => {
  await sandbox.close();
  for (const h of homes) cleanup(h);
});

const requests = async (): Promise<Record<string, number>> => (await control(sandbox.url, 'stats')).requests;
/** How many requests of each app-endpoint route were made between two stats readings. */
const delta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .filter(([k]) => / \/v1\/ai\/(flows|apps)/.test(k))
      .map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
const missing = (family: 'flows' | 'apps' | null) => control(sandbox.url, 'faults', { missingAppFamily: family });
const backendOf = (r: Rig) => `live ${r.sandbox.url}`;

async function runJingle(r: Rig) {
  const run = await r.services.apps.run({
    appId: 'jM4nX8sc',
    inputs: { brief: 'a jingle' },
    confirmedCost: 8,
    outDir: join(r.home, 'out'),
  });
  return settled(r, run.id);
}

describe('workflow apps as flows, with apps as the fallback', () => {
  it('asks flows first: the list, the definition, the run and its polls all go to /v1/ai/flows', async () => {
    await missing(null);
    const r = await rig({ sandbox, home: home() });
    try {
      const before = await requests();
      expect((await r.services.apps.list()).map((a) => a.id)).toContain('jM4nX8sc');
      const done = await runJingle(r);
      expect([done.state, done.error]).toEqual(['done', null]);
      const asked = delta(before, await requests());
      expect(
        Object.keys(asked).every((k) => k.includes('/v1/ai/flows')),
        JSON.stringify(asked),
      ).toBe(true);
      expect(asked['POST /v1/ai/flows/:appId/run']).toBe(1);
      expect(asked['GET /v1/ai/flows/runs/:runId']).toBeGreaterThan(0);
      expect(r.services.apps.families.known(backendOf(r))).toBe('flows');
    } finally {
      await r.close();
    }
  });

  it('where flows answers 404, apps answer; that is remembered in mediadesk.db, so the next list, run and poll ask apps only', async () => {
    await missing('flows');
    const h = home();
    try {
      const first = await rig({ sandbox, home: h });
      try {
        const before = await requests();
        expect((await first.services.apps.list()).map((a) => a.id)).toContain('jM4nX8sc');
        expect(delta(before, await requests())).toEqual({ 'GET /v1/ai/flows': 1, 'GET /v1/ai/apps': 1 });
      } finally {
        await first.close();
      }
      // A new core over the same data folder: no probe of flows again.
      const r = await rig({ sandbox, home: h });
      try {
        const before = await requests();
        await r.services.apps.list();
        const done = await runJingle(r);
        expect([done.state, done.error]).toEqual(['done', null]);
        const asked = delta(before, await requests());
        expect(
          Object.keys(asked).every((k) => k.includes('/v1/ai/apps')),
          JSON.stringify(asked),
        ).toBe(true);
        expect(asked['POST /v1/ai/apps/:appId/run']).toBe(1);
        expect(asked['GET /v1/ai/apps/runs/:runId']).toBeGreaterThan(0);
        expect(r.services.apps.families.known(backendOf(r))).toBe('apps');

        // The service moves on: apps gone, flows back. One 404, then flows, remembered.
        await missing('apps');
        const again = await requests();
        expect((await r.services.apps.list()).length).toBeGreaterThan(0);
        expect(delta(again, await requests())).toEqual({ 'GET /v1/ai/apps': 1, 'GET /v1/ai/flows': 1 });
        expect(new AppFamilies(r.services.apps.store.db).known(backendOf(r))).toBe('flows');
      } finally {
        await r.close();
      }
    } finally {
      await missing(null);
    }
  });

  it('an app neither family knows is not found, and does not change which family is remembered', async () => {
    await missing(null);
    const r = await rig({ sandbox, home: home() });
    try {
      await r.services.apps.list();
      await expect(r.services.apps.get('nope')).rejects.toMatchObject({ code: 'not_found' });
      expect(r.services.apps.families.known(backendOf(r))).toBe('flows');
    } finally {
      await r.close();
    }
  });

  it('mediadesk apps list works whichever family answers, and mediadesk doctor names the one that does', async () => {
    try {
      for (const [gone, answers] of [
        ['flows', 'apps'],
        ['apps', 'flows'],
      ] as const) {
        await missing(gone);
        const env = cliEnv(home(), sandbox.url);
        const list = await runCli(['apps', 'list'], { env });
        expect(list.code, list.err).toBe(0);
        expect(list.out).toMatch(/^jM4nX8sc\s+8\s+Jingle maker\s*$/m);
        const doctor = await runCli(['doctor'], { env });
        const line = doctor.out.split('\n').find((l) => l.includes('Workflow apps'));
        expect(line).toBe(
          gone === 'flows'
            ? 'ok   Workflow apps: GET /v1/ai/flows answered 404 Not found; GET /v1/ai/apps: workflow apps answer as apps'
            : `ok   Workflow apps: GET /v1/ai/flows: workflow apps answer as ${answers}`,
        );
      }
    } finally {
      await missing(null);
    }
  });
});
