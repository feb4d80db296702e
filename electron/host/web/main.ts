import { parseArgs } from 'node:util';
import { apiEnvProblem } from '../../core/api-env.ts';
import { dataHome } from '../../core/paths.ts';
import { startWebHost } from './server.ts';
import {
  accessToken,
  DEFAULT_WEB_PORT,
  givenFolders,
  portsToTry,
  readRecord,
  runningWebHost,
  writeRecord,
} from './launch.ts';
import { ignoredSettingNote, unreadableSettingsWarning } from '../text.ts';
import { HAND_OFF_TOKEN_HEADER } from './hand-off.ts';

/** Hands `args` to the host running on `port`; says what became of them. */
async function handOver(port: number, token: string, args: string[]): Promise<string> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/hand-off`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [HAND_OFF_TOKEN_HEADER]: token },
      body: JSON.stringify({ args, cwd: process.cwd() }),
    });
    if (!r.ok) return `the running host refused the hand-off (${r.status}: ${(await r.text()).slice(0, 200)})`;
    return `handed ${args.length} to the running host's pages`;
  } catch (e) {
    return `the running host could not be reached: ${(e as Error).message}`;
  }
}

const USAGE = 'mediadesk web [--port N] [--new-token] [--renderer DIR] [--folder DIR]... [--open PATH|LINK]...';
let values: { port?: string; renderer?: string; 'new-token'?: boolean; folder?: string[]; open?: string[] };
let folders: string[];
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      renderer: { type: 'string' },
      'new-token': { type: 'boolean' },
      folder: { type: 'string', multiple: true },
      open: { type: 'string', multiple: true },
    },
  }));
  folders = givenFolders(values.folder ?? [], process.env);
} catch (e) {
  process.stderr.write(`mediadesk web: ${(e as Error).message}\nusage: ${USAGE}\n`);
  process.exit(2);
}
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
  process.stderr.write(`mediadesk web: --port must be a whole number from 0 to 65535, got "${values.port}"\n`);
  process.exit(2);
}

// Checked before the core opens anything: a half-set or malformed API target would otherwise
// fall back to the Sandbox unseen, or send work to a server it cannot reach.
const envProblem = apiEnvProblem(process.env);
if (envProblem) {
  process.stderr.write(`mediadesk web: ${envProblem}\n`);
  process.exit(2);
}

const home = dataHome();
// One host per data folder: a second would share its queue and files, and leave two URLs to choose from.
const running = await runningWebHost(home);
if (running) {
  if (values['new-token']) {
    process.stderr.write(
      `mediadesk web: a web host already runs for the data folder ${home} (port ${running.port}); stop it (Ctrl-C in its terminal) before asking for a new token\n`,
    );
    process.exit(2);
  }
  process.stdout.write(`http://127.0.0.1:${running.port}/?token=${accessToken(home).token}\n`);
  // As a second start of the desktop app: what --open names goes to the running host's pages.
  if (values.open?.length) {
    const said = await handOver(running.port, accessToken(home).token, values.open);
    process.stderr.write(`mediadesk web: ${said}\n`);
    process.exit(said.startsWith('handed') ? 0 : 1);
  }
  process.stderr.write(
    `mediadesk web: a web host already runs for the data folder ${home}: open its URL above (this one is not started)\n`,
  );
  process.exit(0);
}

const { token } = accessToken(home, values['new-token']);
const ports = portsToTry(port, readRecord(home)?.port);
let host: Awaited<ReturnType<typeof startWebHost>>;
try {
  host = await startWebHost({ home, ports, token, rendererDir: values.renderer, folders, open: values.open });
} catch (e) {
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') throw e;
  process.stderr.write(
    `mediadesk web: port ${port} ${code === 'EACCES' ? 'needs administrator rights' : 'is in use by another program'}; choose another with --port, or leave --port out to have one picked\n`,
  );
  process.exit(2);
}
const listening = Number(new URL(host.origin).port);
writeRecord(home, { port: listening, pid: process.pid, launch: host.launch });
// The first line is the URL, token included: scripts and tests read it.
process.stdout.write(`${host.url}\n`);
const passedOver = ports.slice(0, ports.includes(listening) ? ports.indexOf(listening) : ports.indexOf(0));
if (port === undefined && passedOver.length)
  process.stderr.write(
    `mediadesk web: ${passedOver.length > 1 ? `ports ${passedOver.join(' and ')} are` : `port ${passedOver[0]} is`} in use by another program, so this launch listens on port ${listening}; the next launch goes back to ${DEFAULT_WEB_PORT} when it is free. A tab opened on another port must open the URL above\n`,
  );
if (values['new-token'])
  process.stderr.write(
    'mediadesk web: a new token was made: tabs opened with an earlier URL must open the URL above\n',
  );
const status = await host.core.backend.status();
process.stdout.write(`data folder ${home}; backend: ${status.reason}\n`);
// A page may type paths inside these only; the person is told which, since a browser cannot pick a path.
process.stdout.write(
  folders.length
    ? `folders a page may name: ${folders.join(', ')}\n`
    : 'folders a page may name: none (drop files on the page, or restart with --folder DIR)\n',
);
// Said once, at start: the Settings screen names them too, but a host started from a script has only this.
const { unreadable, ignored } = host.core.settings.fileState();
if (unreadable)
  process.stderr.write(
    unreadableSettingsWarning(
      unreadable,
      'using the default settings and leaving the file as it is until a setting is saved',
    ),
  );
for (const i of ignored) process.stderr.write(ignoredSettingNote(i));

let closing = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (closing) return;
    closing = true;
    // The port stays remembered; the process and launch go, so the next launch does not look for this one.
    writeRecord(home, { port: listening });
    host.close().finally(() => process.exit(0));
  });
}
