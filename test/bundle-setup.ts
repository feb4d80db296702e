// The CLI, web host and Sandbox processes tests start run from the bundle (bin/launch.js): built once
// here if the sources changed, rather than by the first few processes side by side.
import { freshBuild } from '../bin/launch.js';
import { buildBundle } from '../scripts/node-bundle.ts';

export default async function buildBundleOnce(): Promise<void> {
  if (!freshBuild()) await buildBundle();
}
