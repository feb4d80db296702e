import { chromium } from '@playwright/test';
import { readFileSync } from 'node:fs';
const cpu = () => { const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number); return (f[0]+f[1]+f[2]+f[5]+f[6])/100; };
const url = process.argv[2]; const mode = process.argv[3]; const n = 15;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium-headless-shell', args: ['--no-sandbox','--disable-gpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run','--disable-quic', ...(process.env.XARGS ? process.env.XARGS.split(' ') : [])] });
let ctx0 = await browser.newContext(); let page0 = await ctx0.newPage();
await page0.goto(mode === 'blank' ? 'about:blank' : url); 
const c0 = cpu(); const t0 = Date.now();
for (let i = 0; i < n; i++) {
  if (mode === 'fresh' || mode === 'blank') {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } }); const page = await ctx.newPage();
    if (mode === 'fresh') { await page.goto(url); await page.getByRole('heading').first().waitFor(); await page.waitForLoadState('networkidle'); }
    else await page.goto('about:blank');
    await ctx.close();
  } else if (mode === 'newpage') {
    const page = await ctx0.newPage(); await page.goto(url); await page.getByRole('heading').first().waitFor(); await page.waitForLoadState('networkidle'); await page.close();
  } else if (mode === 'hop') {
    await page0.goto('about:blank'); await page0.goto(i % 2 ? url : process.argv[4]); await page0.getByRole('heading').first().waitFor(); await page0.waitForLoadState('networkidle');
  } else if (mode === 'reload') {
    await page0.goto('about:blank'); await page0.goto(url); await page0.getByRole('heading').first().waitFor(); await page0.waitForLoadState('networkidle');
  }
}
const c1 = cpu(); console.log(mode, 'cpu/load', ((c1-c0)/n).toFixed(3), 'wall/load', ((Date.now()-t0)/n/1000).toFixed(3));
await browser.close();
