// Paths come from the person, not from the page (shared/contract/paths.ts). Every command's path-like
// field is named in PATH_FIELDS, no command takes a path to write, and random paths (absolute,
// relative, climbing, through links) sent over the web host's socket are held to the rule, nothing
// written where they point. FC_SEED=<n> replays a run.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { askOver } from '../ws-ask.ts';
import { z } from 'zod';
import { startWebHost } from '../../electron/host/web/server.ts';
import { FILE_SAVING_COMMANDS } from '../../electron/core/saved-files.ts';
import { COMMAND_NAMES, COMMANDS, type CommandName } from '../../shared/contract/index.ts';
import { PATH_FIELDS } from '../../shared/contract/paths.ts';
import { fuzzRuns } from './fuzz.ts';

fuzzRuns('test/fuzz/web-host-paths.test.ts', { numRuns: 60, timeMs: 20_000 });

/** A request field that names a file or folder, by its name. */
const PATH_LIKE = /path|dir|folder|file|input|out/i;
/** Fields whose names look like paths but are not: ids of the service's folders in audit filters. */
const NOT_PATHS: Partial<Record<CommandName, string[]>> = {};

const topLevelKeys = (schema: z.ZodType): string[] => {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as { properties?: object };
  return Object.keys(json.properties ?? {});
};

describe('the contract names every path a command takes', () => {
  it('each path-like field of every command is in PATH_FIELDS, and none of them is a file to write', () => {
    const unnamed: string[] = [];
    for (const name of COMMAND_NAMES) {
      for (const key of topLevelKeys(COMMANDS[name].request)) {
        if (!PATH_LIKE.test(key) || NOT_PATHS[name]?.includes(key)) continue;
        if (!PATH_FIELDS[name]?.[key]) unnamed.push(`${name}.${key}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  it('a command that saves a file for the person takes no path at all', () => {
    for (const name of FILE_SAVING_COMMANDS)
      expect([name, topLevelKeys(COMMANDS[name].request).filter((k) => PATH_LIKE.test(k))]).toEqual([name, []]);
    expect(topLevelKeys(COMMANDS['presets.import'].request)).toEqual(['text', 'name']);
  });
});

const home = mkdtempSync(join(tmpdir(), 'md-fuzz-paths-'));
const outputRoot = join(home, 'results');
const outside = mkdtempSync(join(tmpdir(), 'md-fuzz-paths-outside-'));
mkdirSync(outputRoot, { recursive: true });
writeFileSync(join(outside, 'authorized_keys'), 'ssh-ed25519 AAAA the real one\n');
// A link inside the output folder (and in the inbox) to a folder outside: judged by its target.
symlinkSync(outside, join(outputRoot, 'link-out'));
mkdirSync(join(home, 'inbox'), { recursive: true });
symlinkSync(outside, join(home, 'inbox', 'link-out'));
const host = await startWebHost({ home, env: { MEDIADESK_OUTPUT_DIR: outputRoot } });
const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`, { origin: host.origin });
await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
afterAll(async () => {
  ws.close();
  await host.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const send = askOver(ws);

/** Paths that do not lie in the output folder (nor the inbox): absolute, relative, climbing out, through a link. */
const name = fc.stringMatching(/^[a-z0-9 ._-]{1,12}$/).filter((n) => n !== '.' && n !== '..');
const outsidePath: fc.Arbitrary<string> = fc.oneof(
  name.map((n) => join(outside, n)),
  name.map((n) => join(outside, n, 'deeper')),
  name.map((n) => `${outputRoot}/../${n}`),
  name.map((n) => `${outputRoot}/link-out/${n}`),
  name.map((n) => `${home}/inbox/link-out/${n}`),
  name.map((n) => `${home}/inbox/../${n}`),
  // Relative: taken from the host's working directory, never the output folder.
  name.map((n) => n),
  name.map((n) => `../${n}`),
  fc.constantFrom('/', '/etc', '/etc/passwd', '~/.ssh', '.', relative(process.cwd(), outside)),
);

const RESULTS_FOLDERS: [CommandName, (p: string) => unknown][] = [
  ['batches.start', (p) => ({ tool: 'upscaler-precision', inputs: [], params: {}, outDir: p })],
  ['batches.check', (p) => ({ tool: 'upscaler-precision', inputs: [], params: {}, outDir: p })],
  ['apps.run', (p) => ({ appId: 'pS7kQ2xa', inputs: {}, outDir: p })],
  ['hotFolders.add', (p) => ({ folder: join(home, 'inbox'), tool: 'upscaler-precision', params: {}, outDir: p })],
  ['audit.sinkSave', (p) => ({ sink: { id: 'files', kind: 'file', folder: p } })],
  ['settings.set', (p) => ({ auditSinks: [{ id: 'files', kind: 'file', folder: p }] })],
];

describe('random paths from a page are held to the rule', () => {
  it('a results folder outside the output folder is refused, naming the field, and nothing is made there', async () => {
    // Every command whose PATH_FIELDS has a results folder is tried here.
    const named = Object.entries(PATH_FIELDS).filter(([, f]) => Object.values(f!).includes('results-folder'));
    expect(RESULTS_FOLDERS.map(([c]) => c).sort()).toEqual(named.map(([c]) => c).sort());
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...RESULTS_FOLDERS), outsidePath, async ([cmd, req], path) => {
        const r = await send(cmd, req(path));
        expect([cmd, path, r.ok, r.error?.code]).toEqual([cmd, path, false, 'forbidden']);
        expect(r.error?.message).toContain('outside the output folder');
      }),
    );
    expect(readdirSync(outside)).toEqual(['authorized_keys']);
  });

  it('a file to read that the person did not give (no upload) is refused, and its content never answered', async () => {
    await fc.assert(
      fc.asyncProperty(outsidePath, async (path) => {
        const r = await send('audit.import', { paths: [join(outside, 'authorized_keys'), path] });
        expect([r.ok, r.error?.code]).toEqual([false, 'forbidden']);
        expect(r.error?.message).not.toContain('ssh-ed25519');
      }),
    );
    const p = await send('presets.import', { path: '/etc/passwd' });
    expect([p.ok, p.error?.code]).toEqual([false, 'invalid']);
    expect(p.error?.message).not.toMatch(/root:/);
  });

  it('a path added to a command that saves a file is refused by its schema, and nothing is written there', async () => {
    const SAVERS: [CommandName, Record<string, unknown>][] = [
      ['audit.export', { format: 'csv' }],
      ['presets.export', {}],
      ['batches.exportReport', { id: 'b' }],
      ['team.export', { what: 'members' }],
      ['creations.download', { id: 'c' }],
      ['support.report', {}],
    ];
    expect(SAVERS.map(([c]) => c).sort()).toEqual([...FILE_SAVING_COMMANDS].sort());
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SAVERS),
        fc.constantFrom('path', 'outDir', 'dir', 'file'),
        outsidePath,
        async ([cmd, req], field, path) => {
          const r = await send(cmd, { ...req, [field]: path });
          expect([cmd, r.ok, r.error?.code]).toEqual([cmd, false, 'invalid']);
        },
      ),
    );
    expect(readdirSync(outside)).toEqual(['authorized_keys']);
  });

  it('an input the person did not give is refused in a batch and an app run, and nothing is queued or sent', async () => {
    // Written as a path (a separator, a leading dot): a bare name is an app's creation id, sent as it is.
    const appPath = outsidePath.filter((p) => p.includes('/') || p.startsWith('.'));
    const INPUTS: [CommandName, fc.Arbitrary<string>, (p: string) => unknown][] = [
      [
        'batches.start',
        outsidePath,
        (p) => ({ tool: 'upscaler-precision', inputs: [join(home, 'inbox'), p], params: {} }),
      ],
      ['batches.check', outsidePath, (p) => ({ tool: 'upscaler-precision', inputs: [p], params: {} })],
      [
        'apps.run',
        appPath,
        (p) => ({ appId: 'pS7kQ2xa', confirmedCost: 12, inputs: { product_image: p, scene: 'x' } }),
      ],
      ['apps.check', appPath, (p) => ({ appId: 'pS7kQ2xa', inputs: { product_image: p, scene: 'x' } })],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INPUTS).chain(([cmd, paths, req]) => fc.tuple(fc.constant(cmd), paths, fc.constant(req))),
        async ([cmd, path, req]) => {
          const r = await send(cmd, req(path));
          expect([cmd, path, r.ok, r.error?.code]).toEqual([cmd, path, false, 'forbidden']);
          expect(r.error?.message).toContain('is not a file or folder you gave MediaDesk');
          expect(r.error?.message).not.toContain('ssh-ed25519');
        },
      ),
    );
    expect((await send('batches.list', {})) as unknown).toMatchObject({ ok: true, result: [] });
    expect((await send('apps.runs', { limit: 10 })) as unknown).toMatchObject({ ok: true, result: { runs: [] } });
  });

  it('an output folder that already holds the person’s files is refused; a new one is taken', async () => {
    const r = await send('settings.set', { outputDir: outside });
    expect([r.ok, r.error?.code]).toEqual([false, 'forbidden']);
    const fresh = join(home, 'new results');
    expect((await send('settings.set', { outputDir: fresh })).ok).toBe(true);
    expect((await send('settings.set', { outputDir: outputRoot })).ok).toBe(true);
    expect(existsSync(join(outside, 'authorized_keys'))).toBe(true);
  });

  it('an export is written where the app chooses, and the browser downloads it from there', async () => {
    const r = (await send('presets.export', {})) as { ok: boolean; result?: { path: string } };
    expect(r.ok).toBe(true);
    expect(r.result!.path.startsWith(join(home, 'hand-over'))).toBe(true);
  });
});
