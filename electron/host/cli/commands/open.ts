import { spawn } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { handOffFiles } from '../../../core/handoff.ts';
import { UsageError, type CliCommand } from '../command.ts';
import { parseOptions } from '../parse-options.ts';

/**
 * Whether the desktop app runs on this data folder: Electron's single-instance lock is a link
 * `SingletonLock` -> `HOST-PID` in it (Linux and macOS). Null where that cannot be told (Windows).
 */
export function appRunning(home: string): boolean | null {
  if (process.platform === 'win32') return null;
  let target: string;
  try {
    target = readlinkSync(join(home, 'SingletonLock'));
  } catch {
    return false;
  }
  const m = /^(.*)-(\d+)$/.exec(target);
  if (!m || m[1] !== hostname()) return false;
  try {
    process.kill(Number(m[2]), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The desktop app's executable: MEDIADESK_APP, else where the installers put it. */
export function appExecutable(env: NodeJS.ProcessEnv): string | null {
  if (env.MEDIADESK_APP) return existsSync(env.MEDIADESK_APP) ? env.MEDIADESK_APP : null;
  const mac = 'MediaDesk.app/Contents/MacOS/MediaDesk';
  const places: Record<string, string[]> = {
    darwin: [join('/Applications', mac), join(env.HOME ?? '', 'Applications', mac)],
    win32: [join(env.LOCALAPPDATA ?? '', 'Programs', 'MediaDesk', 'MediaDesk.exe')],
    linux: ['/opt/MediaDesk/mediadesk'],
  };
  return (places[process.platform] ?? []).find((p) => existsSync(p)) ?? null;
}

export const openCommand: CliCommand = {
  name: 'open',
  usage: [
    'mediadesk open PATH... [--tool ID]',
    '  Hands files and folders to the running desktop app: its Studio shows them as inputs (with',
    '  --tool, that tool; else the one last used). Nothing starts until you press Start.',
    '  The app is reached by a second start of its executable (MEDIADESK_APP, else where it is installed).',
  ].join('\n'),
  async run(ctx) {
    const o = parseOptions(ctx.argv, ['--tool'], []);
    if (!o.positional.length) throw new UsageError('open needs at least one file or folder');
    const h = handOffFiles(o.positional, process.cwd(), o.one('--tool') ?? null);
    for (const r of h.refused) ctx.stderr.write(`mediadesk open: ${r.path} ${r.reason}\n`);
    if (!h.inputs.length || h.refused.some((r) => r.path.startsWith('--tool ')))
      throw new UsageError('nothing to hand over (see above)');
    const exe = appExecutable(ctx.env);
    if (!exe) {
      ctx.stderr.write(
        'mediadesk open: the desktop app is not installed where expected: set MEDIADESK_APP to its executable\n',
      );
      return 1;
    }
    if (appRunning(ctx.home) === false) {
      ctx.stderr.write(`mediadesk open: the desktop app is not running (on ${ctx.home}): start it, then open again\n`);
      return 1;
    }
    const args = [...(h.tool ? ['--tool', h.tool] : []), '--', ...h.inputs.map((i) => i.path)];
    // The second start hands its argv and working folder to the running app, then quits.
    const code = await new Promise<number>((done) => {
      const child = spawn(exe, args, { stdio: 'ignore', env: ctx.env });
      child.on('error', () => done(-1));
      child.on('exit', (c) => done(c ?? 1));
    });
    if (code !== 0) {
      ctx.stderr.write(`mediadesk open: ${exe} did not take the files (exit ${code})\n`);
      return 1;
    }
    ctx.stdout.write(`Handed ${h.inputs.length} to MediaDesk: ${h.inputs.map((i) => i.path).join(', ')}\n`);
    return 0;
  },
};
