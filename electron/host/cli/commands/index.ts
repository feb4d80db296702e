import type { CliCommand } from '../command.ts';

export interface CommandRef {
  name: string;
  /** The line of `mediadesk --help`: here, so the list is printed without loading any command. */
  summary: string;
  /** Loaded only when the command runs: `mediadesk key status` must not pay for sharp, the engine or the Sandbox. */
  load: () => Promise<CliCommand>;
  /** Uses neither the data folder nor MEDIADESK_API_URL/KEY, so neither is checked before it runs. */
  standalone?: true;
}

/** Every CLI command, one module each. Order is the order of `mediadesk --help`. */
export const COMMANDS: CommandRef[] = [
  {
    name: 'run',
    summary: 'Run a tool over files and folders (resumable; exit 0 only when every job is done).',
    load: () => import('./run.ts').then((m) => m.runCommand),
  },
  {
    name: 'tools',
    summary: 'Every tool, curated and generated from the service description: id, name, kind, path; `tools show ID`.',
    load: () => import('./tools.ts').then((m) => m.toolsCommand),
    standalone: true,
  },
  {
    name: 'watch',
    summary: 'Watch a folder: each image that lands in it is processed with a tool, until Ctrl-C (a hot folder).',
    load: () => import('./watch.ts').then((m) => m.watchCommand),
  },
  {
    name: 'jobs',
    summary: "List, retry or cancel queued jobs, or change a batch's budget (shared with the desktop app).",
    load: () => import('./jobs.ts').then((m) => m.jobsCommand),
  },
  {
    name: 'report',
    summary: "A batch's report: what was sent, made results, was charged but failed; estimate beside the charges.",
    load: () => import('./report.ts').then((m) => m.reportCommand),
  },
  {
    name: 'presets',
    summary: "Save a tool's settings under a name, list, remove, export and import them as JSON.",
    load: () => import('./presets.ts').then((m) => m.presetsCommand),
  },
  {
    name: 'video',
    summary: 'Video helpers: `video check` validates reference files and URLs before submission.',
    load: () => import('./video.ts').then((m) => m.video),
    standalone: true,
  },
  {
    name: 'apps',
    summary:
      'Workflow apps (Enterprise): list, your own flows, show inputs and cost, run to downloaded results, earlier runs, cancel, retry.',
    load: () => import('./apps.ts').then((m) => m.appsCommand),
  },
  {
    name: 'loras',
    summary: 'The LoRA catalogue, and training a style or character LoRA from a folder of images.',
    load: () => import('./loras.ts').then((m) => m.lorasCommand),
  },
  {
    name: 'limits',
    summary: "The daily limits per tool the queue keeps to: the plan's caps, today's use, and your own caps.",
    load: () => import('./limits.ts').then((m) => m.limitsCommand),
  },
  {
    name: 'prices',
    summary: "The price per tool the estimate, budgets and reports use: the service's published price, or your own.",
    load: () => import('./prices.ts').then((m) => m.pricesCommand),
  },
  {
    name: 'usage',
    summary: 'Team credit usage over time (cached; at most 100 requests a day, the budget is shown).',
    load: () => import('./usage.ts').then((m) => m.usageCommand),
  },
  {
    name: 'creations',
    summary: 'Your recent creations, newest first (free).',
    load: () => import('./creations.ts').then((m) => m.creationsCommand),
  },
  {
    name: 'audit',
    summary: 'Sync, import and search the offline audit-log cache',
    load: () => import('./audit.ts').then((m) => m.auditCommand),
  },
  {
    name: 'team',
    summary: 'The team server (PostgreSQL) the studio shares limits and budget on: connect, status, test, budget.',
    load: () => import('./team.ts').then((m) => m.teamCommand),
  },
  {
    name: 'key',
    summary: 'API key in the OS keychain: set (from stdin), status, clear',
    load: () => import('./key.ts').then((m) => m.keyCommand),
  },
  {
    name: 'doctor',
    summary: 'Test the connection: host, API key and every model path, with free calls only',
    load: () => import('./doctor.ts').then((m) => m.doctorCommand),
  },
  {
    name: 'report-problem',
    summary: 'A zip of redacted logs, versions, settings and the last crash, to attach to an issue (nothing is sent).',
    load: () => import('./report-problem.ts').then((m) => m.reportProblemCommand),
  },
  {
    name: 'settings',
    summary: 'Read or change settings shared with the desktop app',
    load: () => import('./settings.ts').then((m) => m.settingsCommand),
  },
  {
    name: 'open',
    summary: 'Hand files and folders to the running desktop app: its Studio shows them; nothing starts.',
    load: () => import('./open.ts').then((m) => m.openCommand),
    standalone: true,
  },
  {
    name: 'integrate',
    summary: 'Add "Process with MediaDesk" to the file manager and mediadesk:// links (--remove: take them away).',
    load: () => import('./integrate.ts').then((m) => m.integrateCommand),
    standalone: true,
  },
  {
    name: 'sandbox',
    summary: 'Run the built-in Sandbox API on 127.0.0.1 (demo keys: --print-keys)',
    load: () => import('./sandbox.ts').then((m) => m.sandboxCommand),
    standalone: true,
  },
];
