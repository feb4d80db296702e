/**
 * `npm run package [-- electron-builder options]`: build, icons from resources/icon.svg, a word on
 * the signing the environment allows, then electron-builder (`--publish never` unless told otherwise).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { signingNotes } from '../electron-builder.config.ts';
import { renderIcons } from './icons.ts';
import { writeInstallerIncludes } from './integrations.ts';

const root = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const skipBuild = args.includes('--skip-build');
const builderArgs = args.filter((a) => a !== '--skip-build');
if (!builderArgs.some((a) => a === '--publish' || a.startsWith('--publish=') || a === '-p'))
  builderArgs.push('--publish', 'never');

function run(cmd: string, cmdArgs: string[]): void {
  console.log(`[package] ${cmd} ${cmdArgs.join(' ')}`);
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) {
    console.error(`[package] ${cmd} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

if (!skipBuild) run('npx', ['electron-vite', 'build']);
const icons = await renderIcons(join(root, 'build'));
console.log(`[package] ${icons.length} icon files rendered into build/ from resources/icon.svg`);
for (const f of writeInstallerIncludes(root)) console.log(`[package] ${f} written (context menu, Send To, links)`);
for (const note of signingNotes(process.env, process.platform)) console.log(`[package] ${note}`);
run('npx', ['electron-builder', '--config', 'electron-builder.config.ts', ...builderArgs]);
