import { join, sep } from 'node:path';
import { TOOLS, type ToolEntry } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { sameFileKey } from '../../../shared/file-names.ts';
import { mapLimit } from '../../../shared/concurrency.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../../shared/settings.ts';
import { acceptsExtension, checkInput, inputCheckOf } from '../batch/preflight.ts';
import { fileDigest, samePhoto } from '../batch/same-bytes.ts';
import { scanInputs, type ScannedInput } from '../batch/scan.ts';
import { exists } from '../downloads/download.ts';
import {
  KIND_EXTS,
  outputDirOf,
  renderName,
  resultNameReader,
  resultPathProblem,
  stemOf,
} from '../downloads/naming.ts';
import { outputFolderProblem } from '../output-folder.ts';
import { settingsKey, type DoneOutputs, type JobStore, type MadeWith } from '../queue/store.ts';

type PathReason = { path: string; reason: string };

export interface SortedInputs {
  ready: ScannedInput[];
  /** Ids of unfinished jobs of earlier runs over these inputs. */
  resumed: string[];
  skipped: PathReason[];
  rejected: PathReason[];
  /** Ready inputs whose earlier result was made with other settings: the new one gets a free name. */
  renamed: PathReason[];
}

export interface SortHooks {
  /** The settings the run would send; absent, any earlier result of an input counts as done. */
  params?: Record<string, unknown>;
  signal?: AbortSignal;
  onChecked?: (checked: number, total: number) => void;
}

/**
 * Sorts a batch's inputs as Start does, reading only: the walk (folders, links, earlier results),
 * each file's checks (checkInput), then the queue and the output folder (resumed, output exists,
 * unwritable results). `outDir` null (a check with no usable folder): what depends on it is left out.
 */
export async function sortInputs(
  store: JobStore,
  tool: ToolEntry,
  inputs: readonly string[],
  outDir: string | null,
  backend: string | null,
  settings: Settings,
  platform: string,
  hooks: SortHooks = {},
): Promise<SortedInputs> {
  const check = inputCheckOf(tool)!;
  const skipped: PathReason[] = [];
  const resumed: string[] = [];
  const ready: ScannedInput[] = [];
  const renamed: PathReason[] = [];
  const settingsNow = hooks.params && settingsKey(hooks.params);
  const made = outDir ? store.doneOutputs(tool.id, outDir) : null;
  // Results met in the walk are not inputs: an earlier batch's in a folder inside a chosen one (a new
  // tool over the shoot must not pay for them again), and this tool's own in the output folder.
  const earlier = new Map<string, string>();
  for (const root of inputs) {
    for (const [path, by] of store.resultsInside(root))
      earlier.set(path, `is a result of an earlier ${by} batch; choose its folder itself to use its results as inputs`);
  }
  for (const path of made?.byOutput.keys() ?? [])
    earlier.set(path, `is a result of an earlier ${tool.id} batch into this output folder`);
  // An output folder that is (or holds) a chosen folder, results beside the photos: walked, its results skipped by name.
  const holdsInput = !!outDir && inputs.some((root) => root === outDir || root.startsWith(outDir + sep));
  // Results the queue does not know (a fresh data folder, another machine's, a drop the web host copied anew) are known
  // by name, as this template or the default one writes them, beside the photo they are named after.
  const byName = resultNameReader([settings.namingTemplate, DEFAULT_SETTINGS.namingTemplate], TOOLS);
  const scan = await scanInputs(
    inputs,
    (ext) => acceptsExtension(check, ext),
    holdsInput || !outDir ? [] : [outDir],
    earlier,
    byName,
  );
  const rejected = scan.rejected;
  skipped.push(...scan.duplicates, ...scan.results);
  let checked = 0;
  const reasons = await mapLimit(scan.inputs, 8, async (input) => {
    if (hooks.signal?.aborted) throw new DeskError('conflict', 'a newer check of these inputs replaced this one');
    const reason = await checkInput(check, input.path);
    hooks.onChecked?.(++checked, scan.inputs.length);
    return reason;
  });
  const folderProblems = new Map<string, string | null>();
  const open = outDir && made ? store.openJobsIn(tool.id, outDir, backend) : new Map<string, string>();
  for (const [n, input] of scan.inputs.entries()) {
    if (reasons[n]) {
      rejected.push({ path: input.path, reason: reasons[n]! });
      continue;
    }
    if (!outDir || !made) {
      ready.push(input);
      continue;
    }
    const openId = open.get(input.path);
    if (openId) {
      resumed.push(openId);
      continue;
    }
    const existing = await existingOutput(tool, settings, outDir, input, made, settingsNow);
    if (existing?.done) {
      skipped.push({ path: input.path, reason: `its output ${existing.done} already exists` });
      continue;
    }
    // Its results' sub-folder (see outputDirOf), checked as the output folder is, before anything is paid.
    if (!folderProblems.has(input.relDir))
      folderProblems.set(input.relDir, outputFolderProblem(outputDirOf(outDir, input.relDir)));
    const folderProblem =
      folderProblems.get(input.relDir) ??
      resultPathTooLong(tool, settings.namingTemplate, outDir, input.relDir, input.path, platform);
    if (folderProblem) {
      rejected.push({ path: input.path, reason: `its results cannot be written: ${folderProblem}` });
      continue;
    }
    if (existing?.otherSettings)
      renamed.push({
        path: input.path,
        reason: `its result ${existing.otherSettings} was made with other settings; the new one is saved beside it under a new name`,
      });
    ready.push(input);
  }
  return { ready, resumed, skipped, rejected, renamed };
}

/** Why this input's results would have a path too long for `platform`, with what to do; null when they fit. */
export function resultPathTooLong(
  tool: ToolEntry,
  template: string,
  outDir: string,
  relDir: string,
  inputPath: string | null,
  platform: string,
): string | null {
  const fix = 'choose an output folder with a shorter path or a shorter naming template, or shorten the name';
  const problem = resultPathProblem(
    { outDir, relDir, template, tool: tool.id, kind: tool.result, inputPath },
    platform,
  );
  return problem && `${problem}; ${fix}`;
}

/**
 * This input's earlier result: what the queue knows it made, else a file of its result's name not
 * made from another input (a second card's IMG_0001.jpg). `done`: with these settings (or unknown
 * ones); `otherSettings`: only with others, so the new result gets a free name.
 */
async function existingOutput(
  tool: ToolEntry,
  settings: Settings,
  outDir: string,
  input: ScannedInput,
  made: DoneOutputs,
  settingsNow: string | undefined,
): Promise<{ done?: string; otherSettings?: string } | null> {
  const inputPath = input.path;
  const sameSettings = (from: MadeWith) => settingsNow === undefined || from.settings === settingsNow;
  let otherSettings: string | undefined;
  for (const path of made.byInput.get(inputPath) ?? []) {
    if (!(await exists(path))) continue;
    if (sameSettings(made.byOutput.get(path)!)) return { done: path };
    otherSettings ??= path;
  }
  const dir = outputDirOf(outDir, input.relDir);
  const stem = renderName(
    settings.namingTemplate,
    { name: stemOf(inputPath, ''), tool: tool.id, ext: '__EXT__', batch: '', date: new Date() },
    0,
  );
  let digest: Promise<string> | undefined;
  const digestOfInput = () => (digest ??= fileDigest(inputPath));
  for (const ext of KIND_EXTS[tool.result]) {
    const path = join(dir, stem.replace('__EXT__', ext));
    if (!(await exists(path))) continue;
    // Made from another path, it is the same photo if it holds the same bytes (a folder dropped again in the web host);
    // by its exact name first, else as macOS and Windows match names (another case or Unicode form).
    const from = made.byOutput.get(path) ?? made.byOutputKey.get(sameFileKey(path));
    if (!from) return { done: path };
    if (!(await samePhoto(from, inputPath, digestOfInput))) continue;
    if (sameSettings(from)) return { done: path };
    otherSettings ??= path;
  }
  return otherSettings ? { otherSettings } : null;
}
