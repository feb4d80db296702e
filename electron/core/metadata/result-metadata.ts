import { createHash } from 'node:crypto';
import { link, rename, stat, unlink, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { DefaultExiftoolArgs, ExifTool, type WriteTags } from 'exiftool-vendored';
import sharp from 'sharp';
import type { MetadataSettings } from '../../../shared/settings.ts';
import { isAbsolutePath } from '../../../shared/settings.ts';
import { APP_VERSION } from '../app-version.ts';
import { resultOrientation } from './orientation.ts';

/** How a result was made, as its XMP (namespace `mediadesk`) and its sidecar record it. */
export interface Provenance {
  /** The catalogue's tool id and title. */
  tool: string;
  toolTitle: string;
  /** The endpoint path the job was sent to. */
  modelPath: string;
  parameters: Record<string, unknown>;
  taskId: string | null;
  /** When the result was saved (ISO 8601). */
  madeAt: string;
  appVersion: string;
  /** The input's file name (not its folder: the result may be shared). */
  source: string | null;
}

export const PROVENANCE_NAMESPACE = 'https://mediadesk.app/ns/provenance/1.0/';

// exiftool's user-defined XMP namespace, read from a file at its start (`-config`).
const CONFIG = `%Image::ExifTool::UserDefined = (
  'Image::ExifTool::XMP::Main' => {
    mediadesk => { SubDirectory => { TagTable => 'Image::ExifTool::UserDefined::mediadesk' } },
  },
);
%Image::ExifTool::UserDefined::mediadesk = (
  GROUPS => { 0 => 'XMP', 1 => 'XMP-mediadesk', 2 => 'Image' },
  NAMESPACE => { 'mediadesk' => '${PROVENANCE_NAMESPACE}' },
  WRITABLE => 'string',
  Tool => { }, ToolTitle => { }, ModelPath => { }, Parameters => { }, TaskId => { },
  MadeAt => { }, AppVersion => { }, SourceFile => { },
);
1;
`;

/** Result formats exiftool writes EXIF, ICC and XMP into; of them, those that also hold IPTC. */
const WRITABLE = new Set(['.jpg', '.jpeg', '.png', '.webp', '.tif', '.tiff']);
const HOLDS_IPTC = new Set(['.jpg', '.jpeg', '.tif', '.tiff']);

/** Where a format holds no IPTC, its main fields go to their XMP twins (exiftool's iptc2xmp, abridged). */
const IPTC_TO_XMP = [
  '-XMP-dc:Creator<IPTC:By-line',
  '-XMP-dc:Description<IPTC:Caption-Abstract',
  '-XMP-dc:Rights<IPTC:CopyrightNotice',
  '-XMP-dc:Subject<IPTC:Keywords',
  '-XMP-dc:Title<IPTC:ObjectName',
  '-XMP-photoshop:Headline<IPTC:Headline',
  '-XMP-photoshop:Credit<IPTC:Credit',
  '-XMP-photoshop:City<IPTC:City',
  '-XMP-photoshop:Country<IPTC:Country-PrimaryLocationName',
];

/**
 * Not copied from the source: what describes its own pixels (size, thumbnail, document ids), and
 * what this result states itself (orientation, creator tool, provenance).
 */
const NOT_COPIED = [
  '--IFD1:all',
  '--ExifIFD:ExifImageWidth',
  '--ExifIFD:ExifImageHeight',
  '--XMP-exif:PixelXDimension',
  '--XMP-exif:PixelYDimension',
  '--XMP-tiff:ImageWidth',
  '--XMP-tiff:ImageLength',
  '--XMP-xmpMM:all',
  '--Orientation',
  '--XMP-xmp:CreatorTool',
  '--XMP-mediadesk:all',
];

/** Whether a source is still there and holds metadata to copy (read by sharp: its header only). */
async function metadataHeldBy(source: string): Promise<'some' | 'none' | 'gone' | 'unreadable'> {
  if (!(await stat(source).catch(() => null))) return 'gone';
  const m = await sharp(source)
    .metadata()
    .catch(() => null);
  if (!m) return 'unreadable';
  return m.exif || m.icc || m.iptc || m.xmp || m.comments?.length ? 'some' : 'none';
}

/** Whether a result file can carry metadata here (its format is one exiftool writes). */
export const canCarryMetadata = (path: string) => WRITABLE.has(extname(path).toLowerCase());

/** Parameters as recorded: a local file named by its name alone, not the folders it sits in. */
export function recordedParameters(params: Record<string, unknown>): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    return typeof v === 'string' && isAbsolutePath(v) ? basename(v) : v;
  };
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, strip(v)]));
}

export function provenanceOf(job: {
  tool: string;
  toolTitle: string;
  modelPath: string;
  params: Record<string, unknown>;
  taskId: string | null;
  inputPath: string | null;
}): Provenance {
  return {
    tool: job.tool,
    toolTitle: job.toolTitle,
    modelPath: job.modelPath,
    parameters: recordedParameters(job.params),
    taskId: job.taskId,
    madeAt: new Date().toISOString(),
    appVersion: APP_VERSION,
    source: job.inputPath && basename(job.inputPath),
  };
}

const reasonOf = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0].replace(/^Error: /, '');

/**
 * Copies a source's metadata into results and records their provenance, through one exiftool
 * process started at first use and ended by end() (the engine's stop).
 */
export class ResultMetadata {
  private exiftool: ExifTool | null = null;

  private async tool(): Promise<ExifTool> {
    if (this.exiftool && !this.exiftool.ended) return this.exiftool;
    const config = join(
      tmpdir(),
      `mediadesk-exiftool-${createHash('sha256').update(CONFIG).digest('hex').slice(0, 12)}.config`,
    );
    if (!(await stat(config).catch(() => null))) {
      const temp = `${config}.${process.pid}`;
      await writeFile(temp, CONFIG);
      await rename(temp, config);
    }
    this.exiftool = new ExifTool({ maxProcs: 2, exiftoolArgs: ['-config', config, ...DefaultExiftoolArgs] });
    return this.exiftool;
  }

  async end(): Promise<void> {
    const exiftool = this.exiftool;
    this.exiftool = null;
    await exiftool?.end();
  }

  /**
   * Writes `result` (a file of the format of `final`) with the source's metadata and the provenance,
   * as the settings ask, into the new file `into`; the result itself is never changed. Resolves
   * with what could not be done, in words for the job, and whether `into` was written.
   */
  async writeInto(
    result: string,
    into: string,
    job: { final: string; source: string | null; provenance: Provenance; settings: MetadataSettings },
  ): Promise<{ written: boolean; problem: string | null }> {
    const { settings, provenance } = job;
    await unlink(into).catch(() => undefined);
    if (!canCarryMetadata(job.final) || (!settings.keepMetadata && !settings.writeProvenance))
      return { written: false, problem: null };
    let problem: string | null = null;
    let source = settings.keepMetadata ? job.source : null;
    const held = source ? await metadataHeldBy(source) : 'none';
    if (held === 'gone' || held === 'unreadable') {
      const why = held === 'gone' ? 'is no longer there' : 'is no longer an image';
      problem = `its metadata could not be copied: the source ${basename(source!)} ${why}`;
    }
    if (held !== 'some') source = null;
    if (!source && !settings.writeProvenance) return { written: false, problem };
    const tags: WriteTags = {};
    const args: string[] = [];
    try {
      if (source) {
        const orientation = await resultOrientation(source, result).catch(() => null);
        // `#`: the number itself, not its name ("Rotate 90 CW").
        if (orientation !== null) (tags as Record<string, number>)['Orientation#'] = orientation;
        const ext = extname(job.final).toLowerCase();
        args.push('-tagsFromFile', source);
        if (!HOLDS_IPTC.has(ext)) args.push(...IPTC_TO_XMP, '--IPTC:all');
        args.push('-all:all');
        // The result's own profile says what its numbers mean; without one they are the source's.
        if (!(await sharp(result).metadata()).icc) args.push('-ICC_Profile');
        args.push(...NOT_COPIED);
      }
      if (settings.writeProvenance) Object.assign(tags, provenanceTags(provenance));
      args.push('-o', into);
      const exiftool = await this.tool();
      await exiftool.write(result, tags, { writeArgs: args, useMWG: false, ignoreMinorErrors: true });
      return { written: true, problem };
    } catch (err) {
      await unlink(into).catch(() => undefined);
      const what = source ? 'its metadata could not be copied' : 'how it was made could not be recorded in it';
      return { written: false, problem: `${what}: ${reasonOf(err)}` };
    }
  }

  /**
   * Writes `<result>.json` with the provenance, never over a file that is not ours; resolves
   * with what could not be done.
   */
  async writeSidecar(result: string, provenance: Provenance): Promise<string | null> {
    const path = sidecarPathOf(result);
    const record = { ...provenance, result: basename(result) };
    const temp = `${path}.part`;
    try {
      await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`);
      try {
        await link(temp, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        // Ours from a run that stopped before recording the result: the same task's record.
        const there = await readFile(path, 'utf8').then(JSON.parse, () => null);
        if (there?.taskId !== provenance.taskId || there?.result !== record.result)
          return `its record beside it was not written: ${basename(path)} is already there`;
      }
      return null;
    } catch (err) {
      return `its record beside it could not be written: ${reasonOf(err)}`;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }
}

export const sidecarPathOf = (result: string) => `${result}.json`;

function provenanceTags(p: Provenance): WriteTags {
  return {
    'XMP-xmp:CreatorTool': `MediaDesk ${p.appVersion}`,
    'XMP-mediadesk:Tool': p.tool,
    'XMP-mediadesk:ToolTitle': p.toolTitle,
    'XMP-mediadesk:ModelPath': p.modelPath,
    'XMP-mediadesk:Parameters': JSON.stringify(p.parameters),
    'XMP-mediadesk:TaskId': p.taskId ?? '',
    'XMP-mediadesk:MadeAt': p.madeAt,
    'XMP-mediadesk:AppVersion': p.appVersion,
    ...(p.source ? { 'XMP-mediadesk:SourceFile': p.source } : {}),
  } as WriteTags;
}
