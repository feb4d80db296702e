/**
 * The web host as a library, for a process that serves it beside its own work (the e2e specs' hosts
 * in the test's process): an entry of the node bundle, so such a process loads one build rather than
 * compiling some 200 modules of source.
 */
export { apiEnvProblem } from '../../core/api-env.ts';
export { startWebHost } from './server.ts';
export { accessToken, givenFolders, runningWebHost, writeRecord } from './launch.ts';
