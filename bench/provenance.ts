/**
 * Engine throughput with metadata and provenance on, provenance alone, or both off: camera JPEGs, each result written
 * in process (embed.ts) when on, exiftool in batches for what that does not take. Run: node bench/provenance.ts on|provenance|off (knobs BENCH_JOBS,
 * BENCH_CONCURRENCY, BENCH_EXIFTOOL_PROCS, BENCH_XMP)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { benchEngine } from './bench-engine.ts';
import { DEFAULT_EXIFTOOL_PROCS } from '../electron/core/metadata/result-metadata.ts';
import { childSandbox, loadavg1, machine, mb, rssSampler } from './engine-common.ts';

const MODE = process.argv[2];
if (MODE !== 'on' && MODE !== 'provenance' && MODE !== 'off')
  throw new Error('usage: node bench/provenance.ts on|provenance|off');
const N = Number(process.env.BENCH_JOBS ?? 500);
/** The app's default number of jobs in flight (Settings → concurrency). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_SETTINGS.concurrency);
const PROCS = Number(process.env.BENCH_EXIFTOOL_PROCS ?? DEFAULT_EXIFTOOL_PROCS);
const settings =
  MODE === 'on'
    ? { ...DEFAULT_SETTINGS, keepMetadata: true, writeProvenance: true }
    : { ...DEFAULT_SETTINGS, keepMetadata: false, writeProvenance: MODE === 'provenance' };

const XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
  '<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3"/></rdf:RDF></x:xmpmeta>';

const sb = await childSandbox(0, 'fast');
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-prov-'));
try {
  const input = join(work, 'in');
  mkdirSync(input);
  // Upright (no EXIF turn): the orientation needs no pixel comparison, so the write is what is timed.
  const camera = sharp({ create: { width: 64, height: 48, channels: 3, background: '#6a8' } })
    .withMetadata({ icc: 'p3' })
    .withExif({ IFD0: { Make: 'Canon', Model: 'EOS R5' }, IFD2: { DateTimeOriginal: '2024:05:06 07:08:09' } })
    .jpeg();
  // BENCH_XMP=1: sources with an XMP packet (an editor's export), the case still written by exiftool.
  const photo = await (process.env.BENCH_XMP === '1' ? camera.withXmp(XMP) : camera).toBuffer();
  for (let i = 0; i < N; i++)
    await sharp(photo)
      .keepMetadata()
      .toFile(join(input, `p${i}.jpg`));
  const rss = rssSampler();
  const engine = benchEngine(join(work, 'home'), sb.url, {
    settings: () => settings,
    concurrency: CONCURRENCY,
    metadataProcs: PROCS,
  });
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, 'out') });
  const load0 = loadavg1();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  engine.start();
  for (;;) {
    if (engine.store.batch(r.batch!.id)!.finished) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  const t1 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const b = engine.store.batch(r.batch!.id)!;
  const notes = engine.store.byIds(r.jobIds).filter((j) => j.error).length;
  const calls = engine.resultMetadata.exiftoolCalls;
  const inProcess = engine.resultMetadata.writtenInProcess;
  await engine.close();
  rss.stop();
  const s = (t1 - t0) / 1000;
  const figures: [string, string][] = [
    ['run (create, poll, download, metadata, place)', `${s.toFixed(2)} s`],
    ['jobs per second', (N / s).toFixed(0)],
    ['done (with a note)', `${b.counts.done} of ${b.total} (${notes})`],
    [
      'CPU of the engine process (exiftool not counted)',
      `${((cpu.user + cpu.system) / 1e3 / N).toFixed(2)} ms per job`,
    ],
    ['written in process (without exiftool)', String(inProcess)],
    ['exiftool calls (results per call)', `${calls} (${calls ? ((N - inProcess) / calls).toFixed(1) : '-'})`],
    ['peak RSS of the engine process', mb(rss.peak())],
    ['load average (1 min) at start / end', `${load0} / ${loadavg1()}`],
  ];
  console.log(`### provenance ${MODE}: ${N} camera JPEGs, concurrency ${CONCURRENCY}, exiftool processes ${PROCS}\n`);
  console.log(['| figure | value |', '|---|---|', ...figures.map(([f, v]) => `| ${f} | ${v} |`)].join('\n'));
  console.log(`\nMachine: ${machine()}`);
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
