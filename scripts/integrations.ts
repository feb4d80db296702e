/**
 * Writes what the installers carry for the system integrations, from electron/core/os-integration.ts:
 * the NSIS include (build/installer.nsh). Run by `npm run package` before electron-builder.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NSIS_INCLUDE } from '../electron-builder.config.ts';
import { nsisInclude } from '../electron/core/os-integration.ts';

export function writeInstallerIncludes(projectDir: string): string[] {
  const nsh = join(projectDir, NSIS_INCLUDE);
  mkdirSync(dirname(nsh), { recursive: true });
  writeFileSync(nsh, nsisInclude());
  return [nsh];
}
