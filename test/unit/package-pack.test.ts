import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as asar from '@electron/asar';
import { Arch, build, Platform } from 'electron-builder';
// Not exported from the package's index; the packers' own helper, so the entry is the one shipped.
import { LinuxTargetHelper } from 'app-builder-lib/out/targets/LinuxTargetHelper.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builderConfig, releaseRepository, SHIPPED_FUSES } from '../../electron-builder.config.ts';
import { checkPackedApp, integrationProblems, listArchive } from '../../scripts/package-check.ts';
import { IMAGE_MIME_TYPES, LINUX_MIME_TYPES } from '../../electron/core/os-integration.ts';
import { tempDir } from '../audit/helpers.ts';

/**
 * electron-builder packs the Linux `dir` target from a stand-in Electron folder (the binary cannot be
 * fetched here): its `electron` is a script carrying a fuse wire at Electron's defaults, which
 * electron-builder renames and flips like the real one. `npm test` builds out/ before vitest runs.
 */
const projectDir = join(import.meta.dirname, '..', '..');
const tmp = tempDir('md-pack-');
afterAll(() => tmp.cleanup());

const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

function standInElectron(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const wire = Buffer.concat([Buffer.from(`# ${FUSE_SENTINEL}`), Buffer.from([1, 9]), Buffer.from('101100011\n')]);
  const script = Buffer.concat([Buffer.from('#!/bin/sh\n# A stand-in for the Electron binary.\n'), wire]);
  writeFileSync(join(dir, 'electron'), Buffer.concat([script, Buffer.from('echo "stand-in Electron"\n')]));
  chmodSync(join(dir, 'electron'), 0o755);
  writeFileSync(join(dir, 'LICENSE'), 'stand-in\n');
  return dir;
}

/** Packs with the shipped config (plus `files` patterns added) and returns the app folder. */
async function packLinuxDir(name: string, extraFiles: string[] = []) {
  const base = builderConfig({});
  const output = join(tmp.dir, name);
  let desktopEntry = '';
  await build({
    projectDir,
    targets: Platform.LINUX.createTarget('dir', Arch.x64),
    publish: 'never',
    config: {
      ...base,
      electronDist: electronDist,
      linux: { ...base.linux, files: [...(base.linux!.files as string[]), ...extraFiles] },
      directories: { ...base.directories, output },
      // The .desktop entry deb, rpm and AppImage install, made by electron-builder's own code from
      // this config (those targets need tools fetched from outside the registry).
      afterPack: async (ctx) => {
        const helper = new LinuxTargetHelper(ctx.packager as never);
        desktopEntry = await helper.computeDesktopEntry(ctx.packager.platformSpecificBuildOptions as never);
      },
    },
  });
  const appOutDir = join(output, 'linux-unpacked');
  return { resourcesDir: join(appOutDir, 'resources'), executable: join(appOutDir, 'mediadesk'), desktopEntry };
}

interface AsarDir {
  files: Record<string, AsarDir>;
}

/**
 * The packed app with `paths` struck from its app.asar's index (the bytes after it copied as they are):
 * what a pack whose `files` left them out holds, without packing everything a second time.
 */
async function withoutInArchive(app: Awaited<ReturnType<typeof packLinuxDir>>, name: string, paths: string[]) {
  const resourcesDir = join(tmp.dir, name, 'resources');
  mkdirSync(resourcesDir, { recursive: true });
  const archive = join(app.resourcesDir, 'app.asar');
  const { header, headerSize } = asar.getRawHeader(archive);
  for (const path of paths) {
    const parts = path.split('/');
    const parent = parts.slice(0, -1).reduce((dir, part) => dir.files[part], header as unknown as AsarDir);
    expect(parent.files[parts.at(-1)!], path).toBeDefined();
    delete parent.files[parts.at(-1)!];
  }
  // asar's two pickles: the index's length, then the index (a string padded to four bytes).
  const json = Buffer.from(JSON.stringify(header));
  const index = Buffer.alloc(8 + Math.ceil(json.length / 4) * 4);
  index.writeUInt32LE(index.length - 4, 0);
  index.writeUInt32LE(json.length, 4);
  json.copy(index, 8);
  const size = Buffer.alloc(8);
  size.writeUInt32LE(4, 0);
  size.writeUInt32LE(index.length, 4);
  writeFileSync(join(resourcesDir, 'app.asar'), Buffer.concat([size, index]));
  await pipeline(
    createReadStream(archive, { start: 8 + headerSize }),
    createWriteStream(join(resourcesDir, 'app.asar'), { flags: 'a' }),
  );
  for (const f of ['app.asar.unpacked', 'app-update.yml'])
    symlinkSync(join(app.resourcesDir, f), join(resourcesDir, f));
  return { ...app, resourcesDir };
}

const expectations = {
  projectDir,
  fuses: SHIPPED_FUSES,
  feed: releaseRepository({}),
};

let electronDist: string;
let good: Awaited<ReturnType<typeof packLinuxDir>>;

// On Windows the stand-in (a shell script) cannot stand in; CI checks the real package there (scripts/package-check.ts).
describe.skipIf(process.platform === 'win32')('the packed app (Linux dir target)', () => {
  beforeAll(async () => {
    expect(existsSync(join(projectDir, 'out/main/index.js')), 'out/ is missing: run `npm run build` first').toBe(true);
    electronDist = standInElectron(join(tmp.dir, 'electron-dist'));
    good = await packLinuxDir('good');
  }, 300_000);

  it('holds every bundle, resolves every import, unpacks native code, flips the fuses and names the feed', async () => {
    expect(await checkPackedApp(good, expectations)).toEqual([]);
    const packed = listArchive(join(good.resourcesDir, 'app.asar'));
    for (const bundle of [
      'out/main/index.js',
      'out/main/stage-worker.js',
      'out/preload/index.cjs',
      'out/renderer/index.html',
    ])
      expect(packed.has(bundle), bundle).toBe(true);
    const natives = [...packed].filter(([p]) => p.endsWith('.node'));
    // better-sqlite3, sharp and the keychain binding, each unpacked.
    const host = `${process.platform}-${process.arch}`;
    for (const module of ['better-sqlite3', `sharp-${host}`, `keyring-${host}`])
      expect(
        natives.some(([p, e]) => p.includes(module) && e.unpacked),
        module,
      ).toBe(true);
    // exiftool's script, run by Perl from the unpacked folder.
    expect(packed.get('node_modules/exiftool-vendored.pl/bin/exiftool')?.unpacked).toBe(true);
    // Only this system's SQLite binaries (appFiles): the others are dead weight in a Linux package.
    expect(natives.filter(([p]) => /better-sqlite3\/prebuilds\/(?!linux-)/.test(p))).toEqual([]);
    const script = readFileSync(good.executable, 'latin1');
    // RunAsNode, cookies, NODE_OPTIONS, inspect, asar integrity, asar only: 0 1 0 0 1 1; the rest as Electron ships them.
    expect(script).toContain(`${FUSE_SENTINEL}\u0001\u0009010011011`);
    expect(readFileSync(join(good.resourcesDir, 'app-update.yml'), 'utf8')).toMatch(/provider: github/);
  }, 120_000);

  it('installs a .desktop entry that takes files and links (%U), the image types and mediadesk://', () => {
    expect(good.desktopEntry).toMatch(/^Exec=\/opt\/MediaDesk\/mediadesk %U$/m);
    expect(good.desktopEntry).toMatch(
      /^MimeType=image\/jpeg;image\/png;image\/webp;inode\/directory;x-scheme-handler\/mediadesk;$/m,
    );
    expect(integrationProblems('linux', builderConfig({}), { desktopEntry: good.desktopEntry })).toEqual([]);
    // electron-builder adds the scheme to the list it is given: the app's own list is left as it was.
    expect(LINUX_MIME_TYPES).toEqual([...IMAGE_MIME_TYPES, 'inode/directory']);
  });

  it('reports the worker bundle and a runtime dependency left out of the package', async () => {
    const broken = await withoutInArchive(good, 'broken', ['out/main/stage-worker.js', 'node_modules/undici']);
    const problems = await checkPackedApp(broken, expectations);
    expect(problems).toContain("the audit import's worker bundle (out/main/stage-worker.js) is not in app.asar");
    // The API client imports two of undici's files (client.ts), each reported.
    for (const file of ['dispatcher/agent', 'interceptor/retry'])
      expect(problems).toContainEqual(
        expect.stringMatching(
          new RegExp(`^undici/lib/${file}\\.js, imported by out/main/index\\.js, does not resolve`),
        ),
      );
    expect(problems).toHaveLength(3);
  }, 300_000);
});
