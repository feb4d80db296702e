import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, mkdtemp, rm, stat, symlink, unlink, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { ExifTool, WriteTags } from 'exiftool-vendored';
import { loadSharp } from '../../media/sharp.ts';
import type { MetadataSettings } from '../../../shared/settings.ts';
import { writeWholeAsync } from '../write-whole.ts';
import { resultOrientation } from './orientation.ts';
import { embedInProcess, readSource, xmpPacket, type SourceMetadata } from './embed.ts';
import type { Provenance } from './provenance.ts';

export * from './provenance.ts';

export const PROVENANCE_NAMESPACE = 'https://mediadesk.app/ns/provenance/1.0/';
/** The prefixes provenanceTags() writes, as exiftool declares them. */
const XMP_NAMESPACES = { mediadesk: PROVENANCE_NAMESPACE, xmp: 'http://ns.adobe.com/xap/1.0/' };

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
  Origin => { }, Tool => { }, ToolTitle => { }, ModelPath => { }, Parameters => { }, TaskId => { },
  MadeAt => { }, AppVersion => { }, SourceFile => { },
);
1;
`;

/** Result formats exiftool writes EXIF, ICC and XMP into; of them, those that also hold IPTC. */
const IMAGES = new Set(['.jpg', '.jpeg', '.png', '.webp', '.tif', '.tiff']);
const HOLDS_IPTC = new Set(['.jpg', '.jpeg', '.tif', '.tiff']);
/** Of them, those written in this process in the common case (embed.ts), exiftool kept for the rest. */
const IN_PROCESS = new Set(['.jpg', '.jpeg', '.png', '.webp']);
// QuickTime files take the provenance XMP (no source is copied into them). exiftool only reads
// MP3, WAV, OGG, FLAC, AAC and WebM (its supported file types): those get the sidecar alone.
const QUICKTIME = new Set(['.mp4', '.mov', '.m4v', '.m4a']);

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
  const sharp = await loadSharp();
  const m = await sharp(source)
    .metadata()
    .catch(() => null);
  if (!m) return 'unreadable';
  return m.exif || m.icc || m.iptc || m.xmp || m.comments?.length ? 'some' : 'none';
}

/** Whether a result file can carry metadata here (its format is one exiftool writes). */
export const canCarryMetadata = (path: string) => {
  const ext = extname(path).toLowerCase();
  return IMAGES.has(ext) || QUICKTIME.has(ext);
};

/** exiftool processes an engine writes results with, each fed batches (bench/provenance.ts measured the choice). */
export const DEFAULT_EXIFTOOL_PROCS = 2;

/** Results written by one exiftool call at most: a call of large files stays well within exiftool-vendored's task timeout. */
const MAX_BATCH = 16;

/** One result's write waiting for the next batched call. */
interface QueuedWrite {
  result: string;
  /** The source its metadata is copied from; null: provenance (and orientation) alone. */
  source: string | null;
  /** The copy's arguments after `-tagsFromFile`: results with the same go in one call. */
  copyArgs: string[];
  tags: Record<string, string | number>;
  done: (written: boolean) => void;
}

/**
 * The name exiftool's `%d%f.meta` gives the copy of `result`: a batched call names every copy by
 * that pattern, so only a copy named so can go in one.
 */
const batchedName = (result: string) => {
  const name = basename(result);
  const dot = name.lastIndexOf('.');
  return join(dirname(result), `${dot > 0 ? name.slice(0, dot) : name}.meta`);
};
/** exiftool's `%f`: the name without its last extension, under which a call links the result's source. */
const stemName = (result: string) => basename(batchedName(result)).slice(0, -'.meta'.length);

/** A tag value as exiftool's JSON import reads it literally (it decodes a value starting `base64:`). */
const literal = (v: string | number) =>
  typeof v === 'string' && v.startsWith('base64:') ? `base64:${Buffer.from(v).toString('base64')}` : v;

const reasonOf = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0].replace(/^Error: /, '');

/**
 * Copies a source's metadata into results and records their provenance, through one exiftool
 * process started at first use and ended by end() (the engine's stop).
 */
export class ResultMetadata {
  private exiftool: ExifTool | null = null;
  private starting: Promise<ExifTool> | null = null;
  /** Writes waiting for a call in progress to end; then all of them go in the next one. */
  private queue: QueuedWrite[] = [];
  /** Calls in progress, one per exiftool process at most. */
  private readonly draining = new Set<Promise<void>>();
  /** A folder of this process's own: each call's sources linked by the results' names, and its tags. */
  private staging: Promise<string> | null = null;
  private calls = 0;
  private singles = 0;
  private embedded = 0;

  /** exiftool calls made so far, batched or alone (tests and bench/provenance.ts read it). */
  get exiftoolCalls(): number {
    return this.calls + this.singles;
  }

  /** Results whose metadata was written in this process, without exiftool. */
  get writtenInProcess(): number {
    return this.embedded;
  }
  private readonly warn: (message: string) => void;

  private readonly maxProcs: number;

  /** `warn`: told each time a result is saved without what was asked (the log's warning). */
  constructor(opts: { warn?: (message: string) => void; maxProcs?: number } = {}) {
    this.warn = opts.warn ?? ((m) => console.warn(`mediadesk: ${m}`));
    this.maxProcs = opts.maxProcs ?? DEFAULT_EXIFTOOL_PROCS;
  }

  private told(result: string, problem: string | null): string | null {
    if (problem) this.warn(`${basename(result)} saved; ${problem}`);
    return problem;
  }

  /** Results finishing together share one start: each its own ExifTool would leave the others' processes running. */
  private tool(): Promise<ExifTool> {
    if (this.exiftool && !this.exiftool.ended) return Promise.resolve(this.exiftool);
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  private async start(): Promise<ExifTool> {
    const config = join(
      tmpdir(),
      `mediadesk-exiftool-${createHash('sha256').update(CONFIG).digest('hex').slice(0, 12)}.config`,
    );
    if (!(await stat(config).catch(() => null))) await writeWholeAsync(config, CONFIG);
    // Loaded on first use: the library alone adds about 20 MB to a process that may never write metadata.
    const { DefaultExiftoolArgs, ExifTool } = await import('exiftool-vendored');
    this.exiftool = new ExifTool({
      maxProcs: this.maxProcs,
      exiftoolArgs: ['-config', config, ...DefaultExiftoolArgs],
    });
    return this.exiftool;
  }

  async end(): Promise<void> {
    await Promise.all(this.draining);
    await this.starting?.catch(() => undefined);
    const exiftool = this.exiftool;
    this.exiftool = null;
    await exiftool?.end();
    const staging = this.staging;
    this.staging = null;
    if (staging) await rm(await staging, { recursive: true, force: true }).catch(() => undefined);
  }

  /** Resolves with whether the copy was written, by a call shared with the results queued meanwhile. */
  private batched(write: Omit<QueuedWrite, 'done'>): Promise<boolean> {
    return new Promise((done) => {
      this.queue.push({ ...write, done });
      if (this.draining.size >= this.maxProcs) return;
      const drain: Promise<void> = this.drain().finally(() => this.draining.delete(drain));
      this.draining.add(drain);
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      // Results with the same arguments and no two of one name (a source is linked by it) share a call.
      const calls = new Map<string, QueuedWrite[][]>();
      for (const w of batch) {
        const shape = `${w.source ? 'copy' : 'none'}\n${w.copyArgs.join('\n')}`;
        const same = calls.get(shape) ?? [];
        calls.set(shape, same);
        const free = same.find((c) => !c.some((o) => stemName(o.result) === stemName(w.result)));
        if (free) free.push(w);
        else same.push([w]);
      }
      for (const call of [...calls.values()].flat()) {
        const written = await this.writeBatch(call).catch(() => call.map(() => false));
        call.forEach((w, i) => w.done(written[i]));
      }
    }
  }

  /** One exiftool call writing each result's copy; resolves with which were written. */
  private async writeBatch(call: QueuedWrite[]): Promise<boolean[]> {
    this.staging ??= mkdtemp(join(tmpdir(), 'mediadesk-exiftool-'));
    const dir = join(await this.staging, String(++this.calls));
    await mkdir(dir);
    try {
      const copies = call[0].source ? ['-tagsFromFile', join(dir, '%f.src'), ...call[0].copyArgs] : [];
      for (const w of call) {
        const named = join(dir, `${stemName(w.result)}.src`);
        // A copy where links are not allowed (Windows without the right to make them).
        if (w.source) await symlink(resolve(w.source), named).catch(() => copyFile(w.source!, named));
      }
      const tags = call.map((w) => ({
        SourceFile: w.result,
        // `#`, values as they are: it also keeps exiftool from skipping a tag named SourceFile as the key.
        ...Object.fromEntries(Object.entries(w.tags).map(([k, v]) => [k.endsWith('#') ? k : `${k}#`, literal(v)])),
      }));
      await writeFile(join(dir, 'tags.json'), JSON.stringify(tags));
      const exiftool = await this.tool();
      const { ExifToolTask } = await import('exiftool-vendored');
      // Each file's problems are in its own write's words when it is tried alone; here only what was made counts.
      class BatchWrite extends ExifToolTask<void> {
        protected parse(): void {}
      }
      const args = ['-charset', 'filename=utf8', `-j=${join(dir, 'tags.json')}`, ...copies, '-o', '%d%f.meta'];
      await exiftool.enqueueTask(
        () => new BatchWrite([...args, ...call.map((w) => w.result)], { ignoreMinorErrors: true }),
      );
      return await Promise.all(
        call.map((w) =>
          stat(batchedName(w.result)).then(
            () => true,
            () => false,
          ),
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
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
    const done = await this.write(result, into, job);
    return { ...done, problem: this.told(job.final, done.problem) };
  }

  private async write(
    result: string,
    into: string,
    job: { final: string; source: string | null; provenance: Provenance; settings: MetadataSettings },
  ): Promise<{ written: boolean; problem: string | null }> {
    const { settings, provenance } = job;
    await unlink(into).catch(() => undefined);
    if (!canCarryMetadata(job.final) || (!settings.keepMetadata && !settings.writeProvenance))
      return { written: false, problem: null };
    const ext = extname(job.final).toLowerCase();
    let problem: string | null = null;
    // A source image's EXIF says nothing true of a video or a sound.
    let source = settings.keepMetadata && IMAGES.has(ext) ? job.source : null;
    // Read here for a result written here (a JPEG, PNG or WebP source), else by sharp.
    const read = source && IN_PROCESS.has(ext) ? await readSource(source).catch(() => null) : null;
    let held: Awaited<ReturnType<typeof metadataHeldBy>> = 'none';
    if (read) held = read.any ? 'some' : 'none';
    else if (source) held = await metadataHeldBy(source);
    if (held === 'gone' || held === 'unreadable') {
      const why = held === 'gone' ? 'is no longer there' : 'is no longer an image';
      problem = `its metadata could not be copied: the source ${basename(source!)} ${why}`;
    }
    if (held !== 'some') source = null;
    if (!source && !settings.writeProvenance) return { written: false, problem };
    const tags: Record<string, string | number> = {};
    const copyArgs: string[] = [];
    try {
      // An upright source (most) needs no look at the result's pixels.
      const upright = !source || read?.orientation === 1;
      const orientation = upright ? null : await resultOrientation(source!, result).catch(() => null);
      const here = IN_PROCESS.has(ext) && (read || !source);
      const inProcess = {
        source: source ? read : null,
        orientation,
        provenance: settings.writeProvenance && provenance,
      };
      if (here && (await this.inProcess(result, into, inProcess))) return { written: true, problem };
      if (source) {
        // `#`: the number itself, not its name ("Rotate 90 CW").
        if (orientation !== null) tags['Orientation#'] = orientation;
        if (!HOLDS_IPTC.has(ext)) copyArgs.push(...IPTC_TO_XMP, '--IPTC:all');
        copyArgs.push('-all:all');
        // The result's own profile says what its numbers mean; without one they are the source's.
        if (!(await (await loadSharp())(result).metadata()).icc) copyArgs.push('-ICC_Profile');
        copyArgs.push(...NOT_COPIED);
      }
      if (settings.writeProvenance) Object.assign(tags, provenanceTags(provenance));
      // By its full name: exiftool gives a file the tags whose SourceFile is the name it was given.
      if (batchedName(result) === into && (await this.batched({ result: resolve(result), source, copyArgs, tags })))
        return { written: true, problem };
      // Alone: a copy named otherwise, or one the batch did not make, with what exiftool says of it.
      await unlink(into).catch(() => undefined);
      const args = source ? ['-tagsFromFile', source, ...copyArgs] : [];
      args.push('-o', into);
      const exiftool = await this.tool();
      this.singles++;
      await exiftool.write(result, tags as WriteTags, { writeArgs: args, useMWG: false, ignoreMinorErrors: true });
      return { written: true, problem };
    } catch (err) {
      await unlink(into).catch(() => undefined);
      const what = source ? 'its metadata could not be copied' : 'how it was made could not be recorded in it';
      return { written: false, problem: `${what}: ${reasonOf(err)}` };
    }
  }

  /** Whether the copy was written here, without exiftool (embed.ts says which cases it takes). */
  private async inProcess(
    result: string,
    into: string,
    job: { source: SourceMetadata | null; orientation: number | null; provenance: Provenance | false },
  ): Promise<boolean> {
    const xmp = job.provenance ? xmpPacket(provenanceTags(job.provenance), XMP_NAMESPACES) : null;
    if (job.provenance && !xmp) return false;
    try {
      if (!(await embedInProcess(result, into, { source: job.source, orientation: job.orientation, xmp })))
        return false;
      this.embedded++;
      return true;
    } catch {
      // A file this reader does not follow: exiftool tries it and says what is wrong.
      await unlink(into).catch(() => undefined);
      return false;
    }
  }

  /**
   * Writes `<result>.json` with the provenance, never over a file that is not ours; resolves
   * with what could not be done.
   */
  async writeSidecar(result: string, provenance: Provenance): Promise<string | null> {
    return this.told(result, await this.sidecar(result, provenance));
  }

  private async sidecar(result: string, provenance: Provenance): Promise<string | null> {
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

function provenanceTags(p: Provenance): Record<string, string> {
  return {
    'XMP-xmp:CreatorTool': `MediaDesk ${p.appVersion}`,
    'XMP-mediadesk:Origin': p.origin,
    'XMP-mediadesk:Tool': p.tool,
    'XMP-mediadesk:ToolTitle': p.toolTitle,
    ...(p.modelPath ? { 'XMP-mediadesk:ModelPath': p.modelPath } : {}),
    'XMP-mediadesk:Parameters': JSON.stringify(p.parameters),
    'XMP-mediadesk:TaskId': p.taskId ?? '',
    'XMP-mediadesk:MadeAt': p.madeAt,
    'XMP-mediadesk:AppVersion': p.appVersion,
    ...(p.source ? { 'XMP-mediadesk:SourceFile': p.source } : {}),
  };
}
