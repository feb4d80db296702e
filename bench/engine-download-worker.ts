/**
 * One download in its own process, so its RSS is the downloader's alone (bench/engine-download.ts).
 * `node bench/engine-download-worker.ts engine|raw <url> <path>`: `engine` is downloadToPart (to a
 * .part file, flushed); `raw` is a bare node:http GET whose bytes are dropped (the ceiling of a
 * Node client on this box). Prints one JSON line: {seconds, bytes, peakRss, rssBefore}.
 */
import { request } from 'node:http';
import { downloadToPart } from '../electron/core/downloads/download.ts';

const [mode, url, path] = process.argv.slice(2);
const rssBefore = process.memoryUsage.rss();
let peak = rssBefore;
const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 100);
const t0 = performance.now();
let bytes = 0;
if (mode === 'engine') bytes = (await downloadToPart(url, path)).bytes;
else {
  await new Promise<void>((resolve, reject) => {
    request(url, (res) => {
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', resolve);
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
const seconds = (performance.now() - t0) / 1000;
clearInterval(t);
peak = Math.max(peak, process.memoryUsage.rss());
process.stdout.write(`${JSON.stringify({ seconds, bytes, peakRss: peak, rssBefore })}\n`);
