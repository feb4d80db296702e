import { portableName } from './file-names.ts';

/** The one rule for where results go, as the screens and the CLI's help state it. */
export const RESULTS_RULE =
  'Results go to your output folder (Settings, ~/MediaDesk unless you change it), in a folder named after the tool, then the folder you dropped: ~/MediaDesk/Precision upscaler/shoot.';

/** The folders, inside the output folder, of what is not a tool's batch. */
export const RESULT_FOLDERS = {
  apps: 'Workflow apps',
  creations: 'Creations',
  exports: 'Exports',
  compare: 'Compare',
} as const;

/** The separator of a path the core gave (POSIX or Windows): the renderer has no `node:path`. */
export const sepOf = (p: string) =>
  /^[A-Za-z]:\\|\\\\/.test(p) || (p.includes('\\') && !p.includes('/')) ? '\\' : '/';

export const joinPath = (base: string, ...parts: string[]) => {
  const sep = sepOf(base);
  return [base.replace(/[\\/]+$/, ''), ...parts.map((p) => p.replace(/[\\/]+/g, sep))].join(sep);
};

/**
 * Where a batch's results go when no folder was typed: `<output folder>/<tool title>/<dropped folder>`,
 * or `<output folder>/<tool title>` for files dropped alone. Each name made file-system safe.
 */
export function resultsFolder(outputRoot: string, toolTitle: string, droppedFolder: string | null = null): string {
  const tool = joinPath(outputRoot, portableName(toolTitle, 'Results'));
  return droppedFolder ? joinPath(tool, portableName(droppedFolder, 'Dropped folder')) : tool;
}

/** The folder, inside the output folder, of a workflow app's results, of creations or of exports. */
export const otherResultsFolder = (outputRoot: string, what: keyof typeof RESULT_FOLDERS, appName?: string) =>
  appName
    ? joinPath(outputRoot, RESULT_FOLDERS[what], portableName(appName, 'App'))
    : joinPath(outputRoot, RESULT_FOLDERS[what]);
