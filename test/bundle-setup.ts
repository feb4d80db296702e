// The CLI, web host and Sandbox processes tests start run from the bundle (bin/launch.js): built once
// here if the sources changed, rather than by the first few processes side by side.
import { freshBuild } from '../bin/launch.js';
import { buildBundle } from '../scripts/node-bundle.ts';
import { removeRunTemp } from './run-temp.ts';

/** vitest's and Playwright's global setup; what it returns is their teardown: the run's temp folder goes. */
export default async function buildBundleOnce(): Promise<() => void> {
  if (!freshBuild()) await buildBundle();
  return removeRunTemp;
}
