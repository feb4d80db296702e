import type { Configuration } from 'electron-builder';
import { IMAGE_EXTENSIONS, LINUX_MIME_TYPES } from './electron/core/os-integration.ts';
import { LINK_SCHEME } from './shared/contract/handoff.ts';

/**
 * How `npm run package` turns the electron-vite build (out/) into installers. scripts/package.ts
 * renders the icons into build/ first and says which signing steps the environment allows;
 * test/unit/package-pack.test.ts packs the Linux `dir` target from this same object.
 */

type Env = Record<string, string | undefined>;

/** Which notarization credentials electron-builder will find (the variables it reads), or null. */
export function notarizeCredentials(env: Env): string | null {
  if (env.APPLE_ID && env.APPLE_APP_SPECIFIC_PASSWORD && env.APPLE_TEAM_ID)
    return 'APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD, APPLE_TEAM_ID';
  if (env.APPLE_API_KEY && env.APPLE_API_KEY_ID && env.APPLE_API_ISSUER)
    return 'APPLE_API_KEY, APPLE_API_KEY_ID, APPLE_API_ISSUER';
  if (env.APPLE_KEYCHAIN_PROFILE) return 'APPLE_KEYCHAIN_PROFILE';
  return null;
}

/** A signing certificate electron-builder takes from the environment (CSC_* for both systems, WIN_CSC_* for Windows). */
export function signingCertificate(env: Env, platform: 'mac' | 'win'): string | null {
  if (platform === 'win' && env.WIN_CSC_LINK) return 'WIN_CSC_LINK';
  if (env.CSC_LINK) return 'CSC_LINK';
  if (platform === 'mac' && env.CSC_NAME) return 'CSC_NAME';
  return null;
}

/** The lines `npm run package` prints before packing: what will be signed and notarized, and what is skipped and why. */
export function signingNotes(env: Env, platform: NodeJS.Platform): string[] {
  if (platform === 'darwin') {
    const cert = signingCertificate(env, 'mac');
    const notary = notarizeCredentials(env);
    return [
      cert
        ? `macOS signing: with the certificate from ${cert}`
        : 'macOS signing: no CSC_LINK or CSC_NAME, so the app is signed ad hoc (it runs here; other Macs will warn)',
      notary
        ? `macOS notarization: with ${notary}`
        : 'macOS notarization: skipped (set APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD and APPLE_TEAM_ID, or APPLE_API_KEY, APPLE_API_KEY_ID and APPLE_API_ISSUER)',
    ];
  }
  if (platform === 'win32') {
    const cert = signingCertificate(env, 'win');
    return [
      cert
        ? `Windows signing: with the certificate from ${cert} (password in CSC_KEY_PASSWORD or WIN_CSC_KEY_PASSWORD)`
        : 'Windows signing: skipped, no WIN_CSC_LINK or CSC_LINK (SmartScreen will warn on the installer)',
    ];
  }
  return ['Linux: AppImage, deb and rpm are not signed'];
}

/** The GitHub repository releases are published to and updates read from: the one the workflow runs in. */
export function releaseRepository(env: Env): { owner: string; repo: string } {
  const [owner, repo] = (env.GITHUB_REPOSITORY ?? env.MEDIADESK_RELEASE_REPOSITORY ?? 'mediadesk/mediadesk').split('/');
  return { owner, repo };
}

/** The Electron fuses a shipped app is packed with; the pack test reads them back from the binary. */
export const SHIPPED_FUSES = {
  runAsNode: false,
  enableNodeOptionsEnvironmentVariable: false,
  enableNodeCliInspectArguments: false,
  onlyLoadAppFromAsar: true,
  enableEmbeddedAsarIntegrityValidation: true,
  enableCookieEncryption: true,
} as const;

// app.asar's files besides package.json and production node_modules: the bundles, the Sandbox's media,
// better-sqlite3 without sources or other systems' binaries. Per platform only: a top-level list
// becomes a second file matcher, and a file either one takes is packed.
export function appFiles(system: 'darwin' | 'win32' | 'linux'): string[] {
  return [
    'out/**/*',
    '!out/**/*.map',
    'resources/sandbox/**/*',
    '!node_modules/better-sqlite3/{deps,src,build}/**',
    `!node_modules/better-sqlite3/prebuilds/!(${system})-*.node`,
  ];
}

/** The per-user installer's include, written by scripts/integrations.ts before packing: verbs, Send To, the scheme. */
export const NSIS_INCLUDE = 'build/installer.nsh';
const LINK_PROTOCOL = { name: 'MediaDesk link', schemes: [LINK_SCHEME] };

export function builderConfig(env: Env = process.env): Configuration {
  const macCert = signingCertificate(env, 'mac');
  return {
    appId: 'app.mediadesk.desktop',
    productName: 'MediaDesk',
    executableName: 'mediadesk',
    copyright: 'Copyright © MediaDesk contributors',
    directories: { output: 'dist', buildResources: 'build' },
    asar: true,
    // Native code cannot be loaded from inside an archive: every addon, and sharp's libvips beside it;
    // nor can exiftool (a Perl script, or an .exe on Windows) be run from there.
    asarUnpack: [
      '**/*.node',
      'node_modules/@img/**/*',
      'node_modules/sharp/**/*',
      'node_modules/@napi-rs/**/*',
      'node_modules/exiftool-vendored.pl/**/*',
      'node_modules/exiftool-vendored.exe/**/*',
    ],
    // better-sqlite3, sharp and @napi-rs/keyring are Node-API modules with prebuilt binaries: the
    // ones npm installed load in Electron as they are.
    npmRebuild: false,
    electronFuses: SHIPPED_FUSES,
    publish: [{ provider: 'github', ...releaseRepository(env), releaseType: 'release' }],
    mac: {
      target: [
        { target: 'dmg', arch: ['arm64', 'x64'] },
        { target: 'zip', arch: ['arm64', 'x64'] },
      ],
      category: 'public.app-category.graphics-design',
      files: appFiles('darwin'),
      icon: 'build/icon.icns',
      hardenedRuntime: true,
      gatekeeperAssess: false,
      entitlements: 'resources/mac/entitlements.mac.plist',
      entitlementsInherit: 'resources/mac/entitlements.mac.plist',
      // No certificate: ad hoc, so the arm64 binary (its fuses flipped) still runs.
      identity: macCert ? undefined : '-',
      notarize: notarizeCredentials(env) !== null,
      // Info.plist: CFBundleDocumentTypes (Open With, dropped on the Dock icon) and CFBundleURLTypes.
      // An alternate viewer only: the Mac's own default for images is left alone.
      fileAssociations: [{ ext: IMAGE_EXTENSIONS, name: 'Image', role: 'Viewer', rank: 'Alternate' }],
      protocols: [LINK_PROTOCOL],
    },
    dmg: { sign: false },
    win: {
      target: [{ target: 'nsis', arch: ['x64', 'arm64'] }],
      files: appFiles('win32'),
      icon: 'build/icon.ico',
    },
    nsis: {
      oneClick: false,
      perMachine: false,
      allowToChangeInstallationDirectory: true,
      // The data folder (queue, audit cache, settings, logs) is the user's: an uninstall keeps it.
      deleteAppDataOnUninstall: false,
      // Not fileAssociations: NSIS would make MediaDesk every image's default; the verbs sit beside it.
      include: NSIS_INCLUDE,
    },
    linux: {
      target: ['AppImage', 'deb', 'rpm'],
      files: appFiles('linux'),
      icon: 'build/icons',
      category: 'Graphics',
      synopsis: 'Batch image tools, video builder and audit review for a generative-media API',
      maintainer: 'MediaDesk contributors <mediadesk@users.noreply.github.com>',
      // The .desktop entry: Exec ends in %U (electron-builder's default), MimeType lists these and the scheme.
      // A copy: electron-builder adds the link scheme to the list it is given.
      mimeTypes: [...LINUX_MIME_TYPES],
      protocols: [LINK_PROTOCOL],
    },
  };
}

export default builderConfig();
