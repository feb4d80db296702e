import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { AuditStore } from '../electron/core/audit/store.ts';
import { importFile } from '../electron/core/audit/import.ts';
import { dbPaths } from '../electron/core/paths.ts';
import { startHost } from '../test/e2e/host.ts';
import { writeNdjson } from './audit-data.ts';

/**
 * The audit viewer over 1,000,000 cached events, in Chromium against the web host: how long the first screen takes,
 * frame timings while wheel-scrolling, how long a jump deep into the table takes until its rows are on screen, and
 * filter/sort/search to rows. The round goes at the top of bench/history/audit-viewer.md (its row in RESULTS.md is
 * updated by hand). Needs `npx electron-vite build` first (the host serves out/renderer).
 *
 * Usage: node bench/audit-viewer.ts [N] [--home DIR] [--no-write]
 *   --home DIR reuses a home whose audit.db already holds the events (the import takes minutes).
 */
const args = process.argv.slice(2);
const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const homeArg = args.includes('--home') ? args[args.indexOf('--home') + 1] : null;
const home = homeArg ?? mkdtempSync(join(tmpdir(), 'md-audit-viewer-'));

const dbPath = dbPaths(home).audit;
if (!existsSync(dbPath)) {
  const file = join(home, `events-${count}.ndjson`);
  console.error(`writing ${count} events…`);
  await writeNdjson(file, count);
  console.error('importing (streamed)…');
  const t0 = performance.now();
  const store = new AuditStore(dbPath);
  const report = await importFile(store, file);
  store.db.pragma('optimize');
  store.close();
  rmSync(file);
  console.error(`imported ${report.accepted} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const host = await startHost(home);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};
const r1 = (n: number) => Math.round(n * 10) / 10;

/** Resolves when the table's viewport shows real rows only (no loading placeholders). */
const settled = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const t0 = performance.now();
        const sc = document.querySelector('[data-testid="audit-scroller"]')!;
        const check = () => {
          const box = sc.getBoundingClientRect();
          const inView = (el: Element) => {
            const r = el.getBoundingClientRect();
            return r.bottom > box.top && r.top < box.bottom;
          };
          const loading = [...sc.querySelectorAll('[data-testid="audit-row-loading"]')].some(inView);
          const rows = [...sc.querySelectorAll('[data-testid="audit-row"]')].some(inView);
          if (rows && !loading) resolve(performance.now() - t0);
          else requestAnimationFrame(check);
        };
        check();
      }),
  );

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const tLoad = performance.now();
  await page.goto(`${host.url}#audit`);
  await page
    .getByTestId('audit-count')
    .filter({ hasText: count.toLocaleString('en') })
    .waitFor({ timeout: 120_000 });
  await settled(page);
  const firstScreenMs = performance.now() - tLoad;
  const domRows = await page.getByTestId('audit-row').count();

  // Wheel scrolling: 240 wheel steps of 400 px, one per frame, while a rAF loop records frame gaps.
  const box = (await page.getByTestId('audit-scroller').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __stop: boolean };
    w.__frames = [];
    w.__stop = false;
    let last = performance.now();
    const tick = (t: number) => {
      w.__frames.push(t - last);
      last = t;
      if (!w.__stop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  for (let i = 0; i < 240; i++) {
    await page.mouse.wheel(0, 400);
    await page.waitForTimeout(16);
  }
  const blankAfterFling = await settled(page);
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __stop: boolean };
    w.__stop = true;
    return w.__frames.slice(1);
  });

  // Jumps deep into the table (scrollbar drag): time until the rows of that depth are on screen.
  const jumps: number[] = [];
  for (const frac of [0.1, 0.5, 0.9, 0.999, 0.25, 0.75, 0.33, 0.66, 0.05, 0.95]) {
    await page.evaluate((f) => {
      const sc = document.querySelector('[data-testid="audit-scroller"]')!;
      sc.scrollTop = f * (sc.scrollHeight - sc.clientHeight);
    }, frac);
    jumps.push(await settled(page));
  }

  // Filter, sort and search over the million: time from the change to rows on screen.
  const toRows = async (act: () => Promise<void>) => {
    const before = await page.getByTestId('audit-count').innerText();
    const t0 = performance.now();
    await act();
    await page
      .waitForFunction(
        (b) => document.querySelector('[data-testid="audit-count"]')!.textContent!.trim() !== b.trim(),
        before,
        { polling: 'raf' },
      )
      .catch(() => {});
    await settled(page);
    return performance.now() - t0;
  };
  const filterMs = await toRows(async () => {
    await page.getByTestId('audit-event-type').selectOption('team.member.role_changed');
  });
  const clearMs = await toRows(() => page.getByTestId('audit-clear').click());
  const sortT0 = performance.now();
  await page.getByTestId('sort-date').click();
  await page.waitForTimeout(50);
  await settled(page);
  const sortMs = performance.now() - sortT0;
  await page.getByTestId('sort-date').click();
  const searchMs = await toRows(async () => {
    await page.getByTestId('audit-search').fill('Lookbook');
    await page.getByTestId('audit-search').press('Enter');
  });

  const result = {
    events: count,
    firstScreenMs: Math.round(firstScreenMs),
    domRows,
    frames: {
      n: frames.length,
      p50: r1(q(frames, 0.5)),
      p95: r1(q(frames, 0.95)),
      p99: r1(q(frames, 0.99)),
      max: r1(Math.max(...frames)),
      over50ms: frames.filter((f) => f > 50).length,
    },
    settleAfterFlingMs: r1(blankAfterFling),
    jumpToRowsMs: {
      p50: Math.round(q(jumps, 0.5)),
      p95: Math.round(q(jumps, 0.95)),
      max: Math.round(Math.max(...jumps)),
    },
    filterMs: Math.round(filterMs),
    clearMs: Math.round(clearMs),
    sortMs: Math.round(sortMs),
    searchMs: Math.round(searchMs),
    loadAvg1m: r1(loadavg()[0]),
  };
  console.log(JSON.stringify(result));

  if (!args.includes('--no-write')) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GB RAM, ${process.platform}, Node ${process.versions.node}, Debian Chromium headless (--disable-gpu)`;
    const date = new Date().toISOString().slice(0, 10);
    const section = [
      `## ${date} — audit viewer over ${count.toLocaleString('en')} events`,
      '',
      `${date}, ${machine}; load average ${result.loadAvg1m} at the end. Web host + renderer build, 1280×800,`,
      "events imported with the core's streamed import; the table pages through `audit.query` (200 rows, keyset `after` when the",
      'previous page is known, else `offset`) and keeps only the visible rows in the DOM.',
      '',
      '| measure | value |',
      '|---|---|',
      `| first screen (page load → ${count.toLocaleString('en')} counted, rows visible) | ${result.firstScreenMs} ms |`,
      `| table rows in the DOM | ${result.domRows} |`,
      `| frame gaps while wheel-scrolling (240 × 400 px, ${result.frames.n} frames) | p50 ${result.frames.p50} ms, p95 ${result.frames.p95} ms, p99 ${result.frames.p99} ms, max ${result.frames.max} ms; ${result.frames.over50ms} over 50 ms |`,
      `| rows on screen after the wheel stops | ${result.settleAfterFlingMs} ms |`,
      `| jump deep into the table → rows visible (10 jumps, 5 %…99.9 %) | p50 ${result.jumpToRowsMs.p50} ms, p95 ${result.jumpToRowsMs.p95} ms, max ${result.jumpToRowsMs.max} ms |`,
      `| filter by event type → rows visible (with the count) | ${result.filterMs} ms |`,
      `| clear filters → rows visible (count of all 1,000,000) | ${result.clearMs} ms |`,
      `| sort flip (date ↑) → rows visible | ${result.sortMs} ms |`,
      `| full-text search "Lookbook" → rows visible | ${result.searchMs} ms |`,
      '',
    ].join('\n');
    // Newest first: the new round goes before the first one already there, below the file's title.
    const path = join(import.meta.dirname, 'history', 'audit-viewer.md');
    const text = readFileSync(path, 'utf8');
    const firstRound = text.indexOf('\n## ');
    const updated =
      firstRound < 0
        ? `${text.trimEnd()}\n\n${section}`
        : `${text.slice(0, firstRound + 1)}${section}\n${text.slice(firstRound + 1)}`;
    writeFileSync(path, updated.endsWith('\n') ? updated : `${updated}\n`);
    console.error(`round added to ${path}; update its row in bench/RESULTS.md`);
  }
} finally {
  await browser.close();
  await host.stop();
  if (!homeArg) rmSync(home, { recursive: true, force: true });
}
