/**
 * The Sandbox as a benchmark child process: `node bench/sandbox-server.ts [--task-duration-ms MS]
 * [--render-mode fast|faithful]`. First stdout line: "listening on http://127.0.0.1:PORT", like the
 * CLI's `mediadesk sandbox`, which has no render-mode switch (`fast` is a benchmark aid only).
 */
import { startSandbox, type RenderMode } from '../electron/sandbox/index.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const taskDurationMs = arg('--task-duration-ms') === undefined ? undefined : Number(arg('--task-duration-ms'));
const renderMode = (arg('--render-mode') ?? 'faithful') as RenderMode;
if (renderMode !== 'fast' && renderMode !== 'faithful')
  throw new Error(`--render-mode expects fast or faithful, got ${renderMode}`);
const sb = await startSandbox({ port: 0, taskDurationMs, renderMode });
process.stdout.write(`listening on ${sb.url}\n`);
const stop = () => void sb.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
