import type { CliCommand } from '../command.ts';
import { sandboxCommand } from './sandbox.ts';
import { keyCommand } from './key.ts';
import { settingsCommand } from './settings.ts';
import { video } from './video.ts';
import { auditCommand } from './audit.ts';
import { runCommand } from './run.ts';
import { jobsCommand } from './jobs.ts';
import { appsCommand } from './apps.ts';
import { usageCommand } from './usage.ts';
import { creationsCommand } from './creations.ts';

/** Every CLI command, one module each. Order is the order of `mediadesk --help`. */
export const COMMANDS: CliCommand[] = [
  sandboxCommand,
  keyCommand,
  settingsCommand,
  video,
  auditCommand,
  runCommand,
  jobsCommand,
  appsCommand,
  usageCommand,
  creationsCommand,
];
