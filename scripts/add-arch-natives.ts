/**
 * `node scripts/add-arch-natives.ts OS CPU`: installs, without saving, the prebuilt binaries of sharp
 * and the keychain binding for another architecture (npm installs only the host's), at the versions
 * in package-lock.json, so one runner packs both arm64 and x64 apps with the right native code.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [os, cpu] = process.argv.slice(2);
if (!os || !cpu) {
  console.error('usage: node scripts/add-arch-natives.ts OS CPU   (darwin x64, win32 arm64, linux arm64, …)');
  process.exit(2);
}
const root = join(import.meta.dirname, '..');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string }>;
};
const wanted = new RegExp(
  `^node_modules/(@img/sharp-(libvips-)?${os}-${cpu}|@napi-rs/keyring-${os}-${cpu}(-(gnu|msvc|gnueabihf))?)$`,
);
const specs = Object.entries(lock.packages)
  .filter(([path]) => wanted.test(path))
  .map(([path, entry]) => `${path.slice('node_modules/'.length)}@${entry.version}`);
if (specs.length === 0) {
  console.error(`package-lock.json has no sharp or keychain binaries for ${os}-${cpu}`);
  process.exit(1);
}
console.log(`[natives] ${specs.join(' ')}`);
// --force: npm refuses a package for another CPU or OS otherwise (EBADPLATFORM).
const r = spawnSync('npm', ['install', '--no-save', '--force', '--no-audit', '--no-fund', ...specs], {
  cwd: root,
  stdio: 'inherit',
  shell: process.platform === 'win32',
});
process.exit(r.status ?? 1);
