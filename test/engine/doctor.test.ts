import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { keyFingerprint } from '../../electron/core/secrets.ts';
import { testConnection } from '../../electron/core/connection.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import { DEFAULT_SLUGS, resolvePaths, TOOLS } from '../../shared/catalogue/index.ts';
import { control, sandboxAndFolder } from './helpers.ts';

/** `mediadesk doctor` (Settings' Test connection) as a script runs it: a child process against a Sandbox over HTTP. */
const at = sandboxAndFolder('doctor', 100);

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}
const json = (out: string) => JSON.parse(out) as { backend: string; baseUrl: string; checks: Check[] };
const named = (checks: Check[], name: string) => checks.find((c) => c.name === name)!;
/** API requests the Sandbox has answered so far (every /v1 route, whatever its answer). */
const apiRequests = async () =>
  Object.entries((await control(at.url, 'stats')).requests as Record<string, number>)
    .filter(([k]) => / \/v1\//.test(k))
    .reduce((n, [, v]) => n + v, 0);
/** Distinct list paths of the catalogue's families with the default slugs: one check each. */
const FAMILY_PATHS = new Set(TOOLS.map((t) => resolvePaths(t, DEFAULT_SLUGS).list)).size;
/** The host, the key, one per family list path, and uploads. */
const CHECKS = 4 + FAMILY_PATHS;

describe('mediadesk doctor', () => {
  it('with the defaults (no key, no setting) every check passes against the built-in Sandbox, exit 0', async () => {
    const r = await runCli(['doctor'], {
      env: { MEDIADESK_HOME: join(at.dir, 'home-defaults'), MEDIADESK_API_URL: '', MEDIADESK_API_KEY: '' },
    });
    expect(r.code, r.out + r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    // The host, the key, workflow apps, one line per distinct family list path, then uploads: all ok.
    expect(lines).toHaveLength(CHECKS);
    expect(lines.every((l) => l.startsWith('ok   '))).toBe(true);
    expect(lines[1]).toBe(
      'ok   API key: the Sandbox identity sandbox-owner, sent in x-magnific-api-key: accepted (GET /v1/ai/loras)',
    );
    expect(r.out).toContain('ok   High-resolution generator: GET /v1/ai/mystic: the model path exists\n');
    expect(lines[2]).toBe('ok   Workflow apps: GET /v1/ai/flows: workflow apps answer as flows');
    // request-url only: nothing is PUT, so nothing is left on the account.
    expect(lines.at(-1)).toMatch(
      /^ok {3}Uploads: POST \/v1\/ai\/uploads\/request-url: local files can be uploaded \(to 127\.0\.0\.1:\d+; asset URLs last 24 h\)$/,
    );
    expect(r.err).toBe(`all ${CHECKS} checks passed against the built-in Sandbox\n`);
  });

  it('against a server named by MEDIADESK_API_URL: free requests only, one each, and --json gives the same checks', async () => {
    const before = await apiRequests();
    const r = await runCli(['doctor', '--json'], { env: cliEnv(join(at.dir, 'home-env'), at.url) });
    expect(r.code, r.err).toBe(0);
    const report = json(r.out);
    expect(report.baseUrl).toBe(at.url);
    expect(report.backend).toBe(`the live service at ${at.url} (API key ${keyFingerprint('sandbox-owner')})`);
    expect(report.checks.map((c) => c.ok)).toEqual(Array(CHECKS).fill(true));
    expect(report.checks.every((c) => c.fix === undefined)).toBe(true);
    expect((await apiRequests()) - before).toBe(CHECKS - 1);
    expect((await control(at.url, 'stats')).creates).toEqual({});
  });

  it('a key the service refuses fails the key check, naming the key (never printing it) and the header it went in; exit 1', async () => {
    const key = 'not-a-real-key-5f3a';
    const r = await runCli(['doctor'], { env: cliEnv(join(at.dir, 'home-badkey'), at.url, key) });
    expect(r.code).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ok {3}Host: /);
    expect(lines[1]).toBe(
      `FAIL API key: the API key ${keyFingerprint(key)} from MEDIADESK_API_KEY, sent in x-magnific-api-key: refused (401 Invalid API key); the model paths are checked once this passes` +
        ` -> The service refused the API key ${keyFingerprint(key)} from MEDIADESK_API_KEY ("Invalid API key"), sent in x-magnific-api-key: set MEDIADESK_API_KEY to a valid key.`,
    );
    // Nothing more is asked with a key that is refused.
    expect(lines).toHaveLength(2);
    expect(r.out + r.err).not.toContain(key);
    expect(r.err).toBe(
      '1 of 2 checks failed against the live service at ' + `${at.url} (API key ${keyFingerprint(key)})\n`,
    );
  });

  it('MEDIADESK_API_KEY_HEADER=x-freepik-api-key (the legacy header) still passes: the key goes in it', async () => {
    const r = await runCli(['doctor', '--json'], {
      env: { ...cliEnv(join(at.dir, 'home-header'), at.url), MEDIADESK_API_KEY_HEADER: 'x-freepik-api-key' },
    });
    expect(r.code, r.err).toBe(0);
    const { checks } = json(r.out);
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(named(checks, 'API key').detail).toBe(
      `the API key ${keyFingerprint('sandbox-owner')} from MEDIADESK_API_KEY, sent in x-freepik-api-key: accepted (GET /v1/ai/loras)`,
    );
  });

  it('a key sent in a header the service does not read ("Missing API key") points at the API key header setting, naming the header and the choices', async () => {
    // The settings allow only the service's two headers, both of which the Sandbox reads: the core's check itself, sent a third one, over HTTP.
    const r = await testConnection({
      target: async () => ({ baseUrl: at.url, apiKey: 'sandbox-owner', keyHeader: 'x-service-api-key' }),
      source: async () => 'keychain',
      label: async () => 'the live service',
      slugs: () => ({ ...DEFAULT_SLUGS }),
      settings: () => DEFAULT_SETTINGS,
      env: {},
    });
    expect(r.checks.map((c) => [c.name, c.ok])).toEqual([
      ['Host', true],
      ['API key', false],
    ]);
    expect(named(r.checks, 'API key').detail).toBe(
      `the API key ${keyFingerprint('sandbox-owner')} from the keychain, sent in x-service-api-key: 401 Missing API key; the model paths are checked once this passes`,
    );
    expect(named(r.checks, 'API key').fix).toBe(
      'The service found no API key in the header x-service-api-key: check the API key header setting (now x-service-api-key; the choices are x-magnific-api-key and x-freepik-api-key):' +
        ' Settings > Backend > API key header, or mediadesk settings set keyHeader=x-magnific-api-key.',
    );
  });

  it('a slug override the service does not know fails its families, naming the setting, its value and how to put it back; exit 1', async () => {
    const home = join(at.dir, 'home-slug');
    const env = cliEnv(home, at.url);
    // The CLI's own way to set a slug: the slugs setting takes the overrides as JSON.
    expect(
      (
        await runCli(['settings', 'set', 'slugs={"premium_generator":"no-such-model","lite_model":"veo-3-1-lite"}'], {
          env,
        })
      ).code,
    ).toBe(0);
    const r = await runCli(['doctor'], { env });
    expect(r.code).toBe(1);
    const failed = r.out
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('ok   '));
    expect(failed).toEqual([
      'FAIL High-resolution generator: GET /v1/ai/no-such-model: 404 Not found, the service has no such model path' +
        ' -> The model path segment premium_generator is "no-such-model" (the default is "mystic"): clear premium_generator under Settings > Model path segments' +
        ` to use the default, or run mediadesk settings set 'slugs={"lite_model":"veo-3-1-lite"}'.`,
    ]);
    expect(r.err).toBe(
      `1 of ${CHECKS} checks failed against the live service at ${at.url} (API key ${keyFingerprint('sandbox-owner')})\n`,
    );

    // The command it gives puts it right (and keeps the other override).
    expect((await runCli(['settings', 'set', 'slugs={"lite_model":"veo-3-1-lite"}'], { env })).code).toBe(0);
    expect((await runCli(['doctor'], { env })).code).toBe(0);
  });

  it('a slug two families share fails both, each naming the one setting', async () => {
    const home = join(at.dir, 'home-slug-shared');
    const env = cliEnv(home, at.url);
    expect((await runCli(['settings', 'set', 'slugs={"quality_model":"gpt-image-0"}'], { env })).code).toBe(0);
    const { checks } = json((await runCli(['doctor', '--json'], { env })).out);
    // One setting, two families (the tier and its edit path): both fail and both name it.
    const failed = checks.filter((c) => !c.ok);
    expect(failed.map((c) => c.name)).toEqual(['Quality-tier image', 'Quality-tier edit']);
    for (const c of failed)
      expect(c.fix).toContain('The model path segment quality_model is "gpt-image-0" (the default is "gpt-image-2")');
  });

  it('a server that is busy (429) is said as "try again later" with its Retry-After, after one request: no storm of retries', async () => {
    await control(at.url, 'faults', { rate429: 1, retryAfterSec: 7 });
    try {
      const before = await apiRequests();
      const r = await runCli(['doctor', '--json'], { env: cliEnv(join(at.dir, 'home-busy'), at.url) });
      expect(r.code).toBe(1);
      const { checks } = json(r.out);
      expect(checks.map((c) => [c.name, c.ok])).toEqual([
        ['Host', true],
        ['API key', false],
      ]);
      expect(named(checks, 'API key').detail).toContain('the service is busy (429 Too many requests)');
      expect(named(checks, 'API key').fix).toBe(
        'Try again later: the service asked to wait 7 s (Retry-After); nothing is wrong with the settings for that.',
      );
      expect((await apiRequests()) - before).toBe(1);
    } finally {
      await control(at.url, 'faults', { rate429: 0, retryAfterSec: 1 });
    }
  });

  it('a host that cannot be reached fails the host check, naming MEDIADESK_API_URL; nothing else is tried', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const r = await runCli(['doctor'], { env: cliEnv(join(at.dir, 'home-down'), url) });
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      `FAIL Host: ${url} (the live service at ${url} (API key ${keyFingerprint('sandbox-owner')})) could not be reached: cannot reach the server: it refused the connection (ECONNREFUSED)` +
        ` -> Check MEDIADESK_API_URL (now ${url}) and this machine's network.\n`,
    );
  });
});
