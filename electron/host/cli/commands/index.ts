import type { CliCommand } from '../command.ts';

export interface CommandRef {
  name: string;
  /** Loaded only when the command runs: `mediadesk key status` must not pay for sharp, the engine or the Sandbox. */
  load: () => Promise<CliCommand>;
  /** Uses neither the data folder nor MEDIADESK_API_URL/KEY, so neither is checked before it runs. */
  standalone?: true;
}

/** Every CLI command, one module each. Order is the order of `mediadesk --help`. */
export const COMMANDS: CommandRef[] = [
  { name: 'run', load: () => import('./run.ts').then((m) => m.runCommand) },
  { name: 'watch', load: () => import('./watch.ts').then((m) => m.watchCommand) },
  { name: 'jobs', load: () => import('./jobs.ts').then((m) => m.jobsCommand) },
  { name: 'report', load: () => import('./report.ts').then((m) => m.reportCommand) },
  { name: 'presets', load: () => import('./presets.ts').then((m) => m.presetsCommand) },
  { name: 'video', load: () => import('./video.ts').then((m) => m.video), standalone: true },
  { name: 'apps', load: () => import('./apps.ts').then((m) => m.appsCommand) },
  { name: 'limits', load: () => import('./limits.ts').then((m) => m.limitsCommand) },
  { name: 'prices', load: () => import('./prices.ts').then((m) => m.pricesCommand) },
  { name: 'usage', load: () => import('./usage.ts').then((m) => m.usageCommand) },
  { name: 'creations', load: () => import('./creations.ts').then((m) => m.creationsCommand) },
  { name: 'audit', load: () => import('./audit.ts').then((m) => m.auditCommand) },
  { name: 'key', load: () => import('./key.ts').then((m) => m.keyCommand) },
  { name: 'doctor', load: () => import('./doctor.ts').then((m) => m.doctorCommand) },
  { name: 'settings', load: () => import('./settings.ts').then((m) => m.settingsCommand) },
  { name: 'sandbox', load: () => import('./sandbox.ts').then((m) => m.sandboxCommand), standalone: true },
];
