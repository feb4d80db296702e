import { parseArgs } from 'node:util';
import { apiEnvProblem } from '../../core/api-env.ts';
import { dataHome } from '../../core/paths.ts';
import { startWebHost } from './server.ts';
import { ignoredSettingNote, unreadableSettingsWarning } from '../text.ts';

const { values } = parseArgs({ options: { port: { type: 'string' }, renderer: { type: 'string' } } });
const port = values.port === undefined ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
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

const host = await startWebHost({ home: dataHome(), port, rendererDir: values.renderer });
// The first line is the URL, token included: scripts and tests read it.
process.stdout.write(`${host.url}\n`);
const status = await host.core.backend.status();
process.stdout.write(`data folder ${dataHome()}; backend: ${status.reason}\n`);
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
    host.close().finally(() => process.exit(0));
  });
}
