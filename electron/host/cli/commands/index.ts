import type { CliCommand } from '../command.ts';
import { sandboxCommand } from './sandbox.ts';
import { video } from './video.ts';
import { auditCommand } from './audit.ts';

/** Every CLI command, one module each. Order is the order of `mediadesk --help`. */
export const COMMANDS: CliCommand[] = [
  sandboxCommand,
  video,
  auditCommand,
];
