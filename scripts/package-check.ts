/**
 * Checks electron-builder's unpacked app folder: bundles in app.asar, the main bundles' imports
 * resolved by Node from the packed layout, native code unpacked, fuses flipped, update feed written.
 * One line per problem. Run by test/unit/package-pack.test.ts and by CI after `npm run package`.
 */
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, sep } from 'node:path';
import * as asar from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { init as initLexer, parse as parseImports } from 'es-module-lexer';
import type { Configuration } from 'electron-builder';
import {
  IMAGE_EXTENSIONS,
  IMAGE_MIME_TYPES,
  nsisInclude,
  SEND_TO_NAME,
  VERB,
} from '../electron/core/os-integration.ts';
import { LINK_SCHEME } from '../shared/contract/handoff.ts';

export interface PackedApp {
  /** The folder holding app.asar, app.asar.unpacked and app-update.yml. */
  resourcesDir: string;
  /** The renamed Electron binary, whose fuse wire is read. */
  executable: string;
}

export interface Expectations {
  /** The repository the bundles were built in: every file of its out/ must be packed. */
  projectDir: string;
  /** electron-builder's `electronFuses`, as configured. */
  fuses: Record<string, boolean>;
  /** The GitHub repository the update feed must name. */
  feed: { owner: string; repo: string };
}

/** What a packed app must hold, named as a problem says it. */
const REQUIRED: [path: string, what: string][] = [
  ['package.json', 'the app manifest'],
  ['out/main/index.js', 'the main bundle'],
  ['out/main/stage-worker.js', "the audit import's worker bundle"],
  ['out/preload/index.cjs', 'the preload bundle'],
  ['out/renderer/index.html', 'the renderer'],
  ['resources/sandbox/sample.mp4', "the Sandbox's sample video"],
  ['resources/sandbox/sample.mp3', "the Sandbox's sample audio"],
];

/** All that app.asar may hold at its top. */
const PACKED_TOP = ['package.json', 'out', 'resources', 'node_modules'];

/** Files the OS loader opens by path: they cannot be read from inside the archive. */
const NATIVE = /\.(node|dll|dylib|so)(\.\d+)*$/;
/** Programs run by path: exiftool (copies a source's metadata into results), its script and its .exe. */
const RUN_BY_PATH = /^node_modules\/exiftool-vendored\.(pl|exe)\/bin\/exiftool(\.exe)?$/;

const FUSE_NAMES: Record<string, FuseV1Options> = {
  runAsNode: FuseV1Options.RunAsNode,
  enableCookieEncryption: FuseV1Options.EnableCookieEncryption,
  enableNodeOptionsEnvironmentVariable: FuseV1Options.EnableNodeOptionsEnvironmentVariable,
  enableNodeCliInspectArguments: FuseV1Options.EnableNodeCliInspectArguments,
  enableEmbeddedAsarIntegrityValidation: FuseV1Options.EnableEmbeddedAsarIntegrityValidation,
  onlyLoadAppFromAsar: FuseV1Options.OnlyLoadAppFromAsar,
  loadBrowserProcessSpecificV8Snapshot: FuseV1Options.LoadBrowserProcessSpecificV8Snapshot,
  grantFileProtocolExtraPrivileges: FuseV1Options.GrantFileProtocolExtraPrivileges,
};

interface AsarNode {
  files?: Record<string, AsarNode>;
  unpacked?: boolean;
  link?: string;
}

/** Every file in the archive (posix paths from its root), with whether it is stored unpacked. */
export function listArchive(archive: string): Map<string, { unpacked: boolean }> {
  const out = new Map<string, { unpacked: boolean }>();
  const walk = (node: AsarNode, at: string) => {
    for (const [name, child] of Object.entries(node.files ?? {})) {
      const path = at ? `${at}/${name}` : name;
      if (child.files) walk(child, path);
      else out.set(path, { unpacked: child.unpacked === true });
    }
  };
  walk(asar.getRawHeader(archive).header as AsarNode, '');
  return out;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => f.split(sep).join('/'));
}

const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);
const packageName = (spec: string) =>
  spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];

/** Module specifiers a bundle imports (static and dynamic with a literal), as written. */
async function importsOf(code: string): Promise<string[]> {
  await initLexer;
  const [imports] = parseImports(code);
  return imports.map((i) => i.n).filter((n): n is string => typeof n === 'string');
}

/** Specifiers Node cannot resolve when imported from `fromDir` (an ES module there), each with why. */
function unresolvable(fromDir: string, root: string, specs: string[]): { spec: string; why: string }[] {
  const probe = `
    import { existsSync } from 'node:fs';
    import { fileURLToPath } from 'node:url';
    const out = {};
    for (const spec of ${JSON.stringify(specs)}) {
      try {
        const file = fileURLToPath(import.meta.resolve(spec));
        out[spec] = existsSync(file) ? file : 'resolves to ' + file + ', which does not exist';
      } catch (err) {
        out[spec] = 'ERR ' + err.message.split('\\n')[0];
      }
    }
    process.stdout.write(JSON.stringify(out));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: fromDir, encoding: 'utf8' });
  if (run.status !== 0) return specs.map((spec) => ({ spec, why: `the probe failed: ${run.stderr.trim()}` }));
  const found = JSON.parse(run.stdout) as Record<string, string>;
  return specs.flatMap((spec) => {
    const r = found[spec];
    if (r.startsWith('ERR ')) return [{ spec, why: r.slice(4) }];
    if (!r.startsWith('/') && !/^[A-Za-z]:\\/.test(r)) return [{ spec, why: r }];
    // Found outside the package (a node_modules above it) would not be there on a user's machine.
    if (relative(root, r).startsWith('..')) return [{ spec, why: `resolves outside the package, to ${r}` }];
    return [];
  });
}

/** Dependencies of packed packages that Node's node_modules walk does not find in the package. */
function missingDependencies(root: string, projectDir: string): string[] {
  const problems: string[] = [];
  // A package's own folder: node_modules/name or node_modules/@scope/name, at any depth.
  const packages = filesUnder(join(root, 'node_modules')).filter((f) =>
    /^(?:(?:@[^/]+\/)?[^/@][^/]*\/node_modules\/)*(?:@[^/]+\/)?[^/@][^/]*\/package\.json$/.test(f),
  );
  const findFrom = (dir: string, name: string, top: string): boolean => {
    for (let at = dir; ; at = dirname(at)) {
      if (existsSync(join(at, 'node_modules', name, 'package.json'))) return true;
      if (at === top || dirname(at) === at) return false;
    }
  };
  for (const rel of packages) {
    const dir = dirname(join(root, 'node_modules', rel));
    let manifest: {
      name?: string;
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const optional = Object.keys(manifest.optionalDependencies ?? {});
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      if (optional.includes(dep) || findFrom(dir, dep, root)) continue;
      problems.push(`${dep}, a dependency of ${manifest.name ?? rel}, is not in the package`);
    }
    // An optional one (a platform's prebuilt binary) must be packed when it is installed here.
    const sourceDir = join(projectDir, relative(root, dir));
    for (const dep of optional) {
      if (findFrom(sourceDir, dep, projectDir) && !findFrom(dir, dep, root))
        problems.push(`${dep}, installed for ${manifest.name ?? rel}, is not in the package`);
    }
  }
  return problems;
}

/** Every problem found with the packed app; empty when it is complete. */
export async function checkPackedApp(app: PackedApp, expect: Expectations): Promise<string[]> {
  const problems: string[] = [];
  const archive = join(app.resourcesDir, 'app.asar');
  if (!existsSync(archive)) return [`${archive} does not exist`];
  const packed = listArchive(archive);

  for (const [path, what] of REQUIRED) if (!packed.has(path)) problems.push(`${what} (${path}) is not in app.asar`);
  // Sources, tests and docs have no place in a user's install.
  const stray = new Set([...packed.keys()].map((p) => p.split('/')[0]).filter((top) => !PACKED_TOP.includes(top)));
  for (const top of stray) problems.push(`${top} is in app.asar but is not part of the app`);
  for (const f of filesUnder(join(expect.projectDir, 'out'))) {
    const path = `out/${f}`;
    if (!f.endsWith('.map') && !packed.has(path) && !REQUIRED.some(([p]) => p === path))
      problems.push(`${path} is built but not in app.asar`);
  }
  for (const [path, entry] of packed) {
    if (!NATIVE.test(path) && !RUN_BY_PATH.test(path)) continue;
    if (!entry.unpacked)
      problems.push(
        `${path} is ${NATIVE.test(path) ? 'native code' : 'a program'} packed inside app.asar: it must be unpacked`,
      );
    else if (!existsSync(join(`${archive}.unpacked`, path)))
      problems.push(`${path} is marked unpacked but missing from app.asar.unpacked`);
  }

  // Node's own resolver, over what it reads of the archive extracted (unpacked files included): the
  // main bundles, every package.json, and the files of the packages the bundles import.
  const root = mkdtempSync(join(tmpdir(), 'md-packed-'));
  try {
    const extract = (paths: string[]) => {
      for (const path of paths) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), asar.extractFile(archive, path));
      }
    };
    const archived = [...packed.keys()];
    const mainFiles = archived.filter((p) => p.startsWith('out/main/'));
    extract(mainFiles);
    const mainDir = join(root, 'out', 'main');
    const bundles = mainFiles.filter((p) => p.endsWith('.js')).map((p) => posix.relative('out/main', p));
    const bare = new Map<string, string>();
    for (const bundle of bundles) {
      for (const spec of await importsOf(readFileSync(join(mainDir, bundle), 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = posix.join('out/main', posix.dirname(bundle), spec);
          if (!packed.has(target)) problems.push(`${target}, imported by out/main/${bundle}, is not in app.asar`);
        } else if (!isBuiltin(spec) && packageName(spec) !== 'electron' && !bare.has(spec)) {
          bare.set(spec, `out/main/${bundle}`);
        }
      }
    }
    if (bare.size === 0) problems.push('the main bundle imports no package at all: the bundles were not read');
    const imported = [...new Set([...bare.keys()].map((spec) => `node_modules/${packageName(spec)}/`))];
    extract(
      archived.filter(
        (p) =>
          !p.startsWith('out/main/') &&
          (posix.basename(p) === 'package.json' || imported.some((dir) => p.startsWith(dir))),
      ),
    );
    for (const { spec, why } of unresolvable(mainDir, root, [...bare.keys()]))
      problems.push(`${spec}, imported by ${bare.get(spec)}, does not resolve in the package: ${why}`);
    problems.push(...missingDependencies(root, expect.projectDir));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  try {
    const wire = await getCurrentFuseWire(app.executable);
    for (const [name, want] of Object.entries(expect.fuses)) {
      const index = FUSE_NAMES[name];
      if (index === undefined) continue;
      const state = (wire as unknown as Record<number, number>)[index];
      const on = state === 49;
      if (on !== want)
        problems.push(`fuse ${name} is ${on ? 'on' : 'off'} in ${app.executable}, configured ${want ? 'on' : 'off'}`);
    }
  } catch (err) {
    problems.push(`the fuses of ${app.executable} cannot be read: ${(err as Error).message}`);
  }

  const feedFile = join(app.resourcesDir, 'app-update.yml');
  if (!existsSync(feedFile)) problems.push('app-update.yml (the update feed) was not written');
  else {
    const feed = Object.fromEntries(
      readFileSync(feedFile, 'utf8')
        .split('\n')
        .map((l) => /^(\w+):\s*(.*)$/.exec(l.trim()))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], m[2].replace(/^['"]|['"]$/g, '')]),
    );
    const want = { provider: 'github', owner: expect.feed.owner, repo: expect.feed.repo };
    for (const [k, v] of Object.entries(want))
      if (feed[k] !== v) problems.push(`app-update.yml has ${k}: ${feed[k] ?? '(none)'}, expected ${v}`);
  }
  return problems;
}

/** What the installers carry for one system's integrations: the NSIS include's text, the .desktop entry's. */
export interface InstallerIntegrations {
  nsisInclude?: string | null;
  desktopEntry?: string | null;
}

const asList = <T>(v: T | T[] | null | undefined): T[] => [v ?? []].flat() as T[];

/**
 * The right-click verbs, Send To, the link scheme and the file types each system's installer
 * registers (os-integration.ts), checked in the config electron-builder packs from and in the
 * files it packs: the NSIS include on Windows, the .desktop entry on Linux, Info.plist's types on macOS.
 */
export function integrationProblems(
  system: 'darwin' | 'win32' | 'linux',
  config: Configuration,
  found: InstallerIntegrations,
): string[] {
  const problems: string[] = [];
  if (system === 'win32') {
    if (!config.nsis?.include)
      return ['nsis.include is not set: the installer writes no context menu, Send To or link'];
    const nsh = found.nsisInclude;
    if (nsh == null) return [`${config.nsis.include} (the NSIS include) was not written`];
    if (nsh !== nsisInclude()) problems.push(`${config.nsis.include} is not the one os-integration.ts makes now`);
    const install = /!macro customInstall([\s\S]*?)!macroend/.exec(nsh)?.[1] ?? '';
    const uninstall = /!macro customUnInstall([\s\S]*?)!macroend/.exec(nsh)?.[1] ?? '';
    for (const ext of IMAGE_EXTENSIONS)
      if (!install.includes(`SystemFileAssociations\\.${ext}\\shell\\MediaDesk.Process" "" "${VERB}"`))
        problems.push(`the installer adds no "${VERB}" on .${ext} files`);
    if (!install.includes(`Classes\\Directory\\shell\\MediaDesk.Process" "" "${VERB}"`))
      problems.push(`the installer adds no "${VERB}" on folders`);
    if (!install.includes(`Classes\\${LINK_SCHEME}" "URL Protocol"`))
      problems.push(`the installer registers no ${LINK_SCHEME}:// scheme`);
    if (!install.includes(`CreateShortCut "$SENDTO\\${SEND_TO_NAME}"`))
      problems.push('the installer makes no Send To shortcut');
    if (!uninstall.includes(`Delete "$SENDTO\\${SEND_TO_NAME}"`))
      problems.push('the uninstaller leaves the Send To shortcut');
    if (!uninstall.includes(`DeleteRegKey HKCU "Software\\Classes\\${LINK_SCHEME}"`))
      problems.push(`the uninstaller leaves the ${LINK_SCHEME}:// scheme`);
  } else if (system === 'darwin') {
    const exts = asList(config.mac?.fileAssociations).flatMap((a) => asList(a.ext));
    for (const ext of IMAGE_EXTENSIONS)
      if (!exts.includes(ext)) problems.push(`Info.plist's CFBundleDocumentTypes lack .${ext} (mac.fileAssociations)`);
    const schemes = asList(config.mac?.protocols ?? config.protocols).flatMap((p) => asList(p.schemes));
    if (!schemes.includes(LINK_SCHEME))
      problems.push(`Info.plist's CFBundleURLTypes lack ${LINK_SCHEME} (mac.protocols)`);
  } else {
    const entry = found.desktopEntry;
    if (entry == null) return ['the .desktop entry was not found'];
    const key = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(entry)?.[1] ?? null;
    const exec = key('Exec');
    if (!exec?.endsWith(' %U'))
      problems.push(`the .desktop entry's Exec (${exec ?? 'none'}) does not take files and links (%U)`);
    const mime = (key('MimeType') ?? '').split(';');
    for (const m of [...IMAGE_MIME_TYPES, 'inode/directory', `x-scheme-handler/${LINK_SCHEME}`])
      if (!mime.includes(m)) problems.push(`the .desktop entry's MimeType lacks ${m}`);
  }
  return problems;
}

/** The .desktop entry a .deb installs (dpkg-deb reads it), or null where there is none or no dpkg-deb. */
export function desktopEntryOfDeb(deb: string): string | null {
  const r = spawnSync(
    'sh',
    ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/share/applications/mediadesk.desktop', 'sh', deb],
    { encoding: 'utf8' },
  );
  return r.status === 0 && r.stdout ? r.stdout : null;
}

/** Where electron-builder leaves the unpacked app of `platform`/`arch` in its output folder. */
export function packedAppIn(distDir: string, platform: NodeJS.Platform, arch: string): PackedApp {
  if (platform === 'darwin') {
    const app = join(distDir, arch === 'x64' ? 'mac' : `mac-${arch}`, 'MediaDesk.app');
    return { resourcesDir: join(app, 'Contents', 'Resources'), executable: app };
  }
  const folder = join(distDir, `${platform === 'win32' ? 'win' : 'linux'}-${arch === 'x64' ? '' : `${arch}-`}unpacked`);
  const executable = join(folder, platform === 'win32' ? 'MediaDesk.exe' : 'mediadesk');
  return { resourcesDir: join(folder, 'resources'), executable };
}

// `node scripts/package-check.ts [dist]`: checks this system's packed app after `npm run package`.
if (import.meta.main) {
  const { builderConfig, releaseRepository, SHIPPED_FUSES } = await import('../electron-builder.config.ts');
  const projectDir = join(import.meta.dirname, '..');
  const dist = process.argv[2] ?? join(projectDir, 'dist');
  const app = packedAppIn(dist, process.platform, process.arch);
  const problems = await checkPackedApp(app, {
    projectDir,
    fuses: SHIPPED_FUSES,
    feed: releaseRepository(process.env),
  });
  const system = process.platform === 'win32' || process.platform === 'darwin' ? process.platform : 'linux';
  const config = builderConfig(process.env);
  const include = config.nsis?.include ? join(projectDir, config.nsis.include) : null;
  const deb = existsSync(dist) ? readdirSync(dist).find((f) => f.endsWith('.deb')) : undefined;
  problems.push(
    ...integrationProblems(system, config, {
      nsisInclude: include && existsSync(include) ? readFileSync(include, 'utf8') : null,
      desktopEntry: deb ? desktopEntryOfDeb(join(dist, deb)) : null,
    }),
  );
  for (const p of problems) console.error(`package problem: ${p}`);
  console.log(
    `${app.executable}: ${problems.length === 0 ? 'the package is complete' : `${problems.length} problems`}`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
