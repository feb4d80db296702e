import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { TOOLS } from '../../../shared/catalogue/index.ts';
import { PROVENANCE_NAMESPACE } from '../metadata/result-metadata.ts';
import { isWithin } from '../paths.ts';

/** A hot folder as the loop checks see it: where it is and where its results go (both canonical). */
export interface FolderAndOutput {
  folder: string;
  outDir: string;
}

/**
 * Why results written to `outDir` could reach one of the `watched` folders, or null: the output
 * folder may not be, contain or lie inside any watched folder (A into B and B into A loop too).
 */
export function outputLoop(outDir: string, watched: readonly string[]): string | null {
  for (const w of watched) {
    if (outDir === w) return `is the watched folder ${w}, so its results would be processed again`;
    if (isWithin(outDir, w)) return `is inside the watched folder ${w}, so its results would be processed again`;
    if (isWithin(w, outDir)) return `contains the watched folder ${w}, so its results could be processed again`;
  }
  return null;
}

/**
 * Why `row` may not be watched beside `all` (every hot folder, `row` among them), or null: its
 * results could reach a watched folder, or another folder's results could reach it.
 */
export function loopOf<F extends FolderAndOutput & { id: string }>(row: F, all: readonly F[]): string | null {
  const own = outputLoop(
    row.outDir,
    all.map((f) => f.folder),
  );
  if (own) return `its output folder ${row.outDir} ${own}`;
  const feeder = all.find((f) => f.id !== row.id && outputLoop(f.outDir, [row.folder]));
  if (feeder) return `the hot folder ${feeder.folder} writes its results to ${feeder.outDir}, which would feed it`;
  return null;
}

/** How much of a file's start and end is searched for the provenance XMP (JPEG and PNG keep it near the start, MP4 may at the end). */
const SCAN_BYTES = 256 * 1024;
const NAMESPACE = Buffer.from(PROVENANCE_NAMESPACE);

/** Whether a file carries MediaDesk's provenance XMP (a result of this or another MediaDesk, copied or not). */
export async function carriesProvenance(path: string): Promise<boolean> {
  const file = await open(path, 'r').catch(() => null);
  if (!file) return false;
  try {
    const { size } = await file.stat();
    const read = async (at: number) => {
      const buf = Buffer.alloc(Math.min(SCAN_BYTES, size - at));
      const { bytesRead } = await file.read(buf, 0, buf.length, at);
      return buf.subarray(0, bytesRead);
    };
    if ((await read(0)).includes(NAMESPACE)) return true;
    return (
      size > SCAN_BYTES && (await read(Math.max(SCAN_BYTES - NAMESPACE.length, size - SCAN_BYTES))).includes(NAMESPACE)
    );
  } finally {
    await file.close();
  }
}

// `photo_upscaler-precision.png`, `photo_upscaler-precision_2-3.png`: the default name of a tool's result.
const TOOL_IDS = TOOLS.map((t) => t.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
const RESULT_NAME = new RegExp(`_(?:${TOOL_IDS})(?:_\\d+)?(?:-\\d+)?\\.[A-Za-z0-9]+$`);

/**
 * Whether a file's name is one MediaDesk gives its results. Such a file with no other mark of ours
 * may still be one (metadata stripped, copied back by a sync tool): the spend guard counts them.
 */
export const looksLikeResult = (path: string) => RESULT_NAME.test(basename(path));
