import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { axeViolations } from './axe.ts';
import { expect, test as base } from './fixtures.ts';
import { desk, newHome, startHost, watchErrors, watchLiveRegions, type HostHandle } from './host.ts';
import { makeImages } from './studio-helpers.ts';

/**
 * axe-core's WCAG 2.x A/AA rules over every screen in the light theme, and its rules of colour in the
 * dark one, empty and with content: no violation of any impact. A rule axe cannot decide (contrast
 * over an image) is not a violation.
 * One test per screen and theme (they run beside each other); each checks that the menu lists
 * exactly SCREENS, so a new screen fails here until it has its own test.
 */
const SCREENS = [
  'studio',
  'queue',
  'results',
  'compare',
  'hot-folders',
  'loras',
  'video',
  'music',
  'apps',
  'analytics',
  'creations',
  'audit',
  'settings',
];
const THEMES = ['light', 'dark'] as const;
type Theme = (typeof THEMES)[number];

const themedHome = (theme: Theme) => {
  const home = newHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ theme }));
  return home;
};

type Opened = { page: Page; errors: string[]; live: () => Promise<{ bornFull: string[] }> };

// The empty screens only look: per theme and worker one host and one page serve them all, as one page
// once walked every screen (a page load per screen test would cost more than its axe run).
const test = base.extend<object, { themed: (theme: Theme) => Promise<Opened> }>({
  themed: [
    async ({ browser }, use) => {
      const opened = new Map<Theme, Promise<Opened>>();
      const hosts: HostHandle[] = [];
      await use((theme) => {
        if (!opened.has(theme))
          opened.set(
            theme,
            (async () => {
              const host = await startHost(themedHome(theme), {}, 0, [], { ownProcess: true });
              hosts.push(host);
              const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
              return { page, ...(await open(page, host, theme)) };
            })(),
          );
        return opened.get(theme)!;
      });
      for (const h of hosts) await h.stop();
    },
    { scope: 'worker' },
  ],
});

// The themes differ only in colours (CSS variables on <html>), so the rules of structure, names and
// roles answer alike in both: the dark theme runs axe's rules that look at colour, at about a third
// of the whole set's cost.
const RULES_OF_COLOUR = ['color-contrast', 'link-in-text-block'];

async function violations(page: Page, where: string, theme: Theme): Promise<string[]> {
  const found = await axeViolations(page, theme === 'dark' ? { rules: RULES_OF_COLOUR } : {});
  return found.map((v) => `${where}: ${v}`);
}

/** Opens the app in `theme`, checks the menu lists SCREENS; returns the live-region log's reader and the page's errors. */
async function open(page: Page, host: HostHandle, theme: Theme) {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  await page.goto(host.url);
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
  const ids = await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('button')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace('nav-', '')));
  expect(ids).toEqual(SCREENS);
  return { errors, live };
}

/** What every test ends on: no violation, no work status born already saying it, no CSP or page error. */
async function expectClean(found: string[], live: () => Promise<{ bornFull: string[] }>, errors: string[]) {
  expect(found).toEqual([]);
  // A status of work under way ("Loading…", "Contacting the API…") or of its outcome ("Sync
  // complete") never appears already saying it, where screen readers would often keep quiet.
  expect((await live()).bornFull.filter((t) => /…$|^Sync /.test(t))).toEqual([]);
  expect(errors).toEqual([]);
}

for (const theme of THEMES) {
  for (const id of SCREENS) {
    test(`the ${id} screen passes axe in the ${theme} theme`, async ({ themed }) => {
      const { page, errors, live } = await themed(theme);
      await page.getByTestId(`nav-${id}`).click();
      // The screen's code loads when it is first shown: its heading says it has rendered.
      await expect(page.getByTestId(`screen-${id}`).getByRole('heading', { level: 1 })).toBeVisible();
      // Lists and charts that load after the screen opens are part of what is checked.
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(300);
      await expectClean(await violations(page, id, theme), live, errors);
    });
  }

  test(`a synced audit log with an event open passes axe in the ${theme} theme`, async ({ page, launch }) => {
    // A sync of 6,000 events, then axe over the filled screen: past two minutes on the loaded 2-core machine.
    test.slow();
    const { errors, live } = await open(page, await launch(themedHome(theme)), theme);
    await page.getByTestId('nav-audit').click();
    await page.getByTestId('audit-sync').click();
    await expect(page.getByTestId('audit-sync-report')).toContainText('Sync complete', { timeout: 60_000 });
    await page.getByTestId('audit-row').first().dblclick();
    await expect(page.getByRole('heading', { level: 2, name: /\./ }).first()).toBeVisible();
    await expectClean(await violations(page, 'audit with an event open', theme), live, errors);
  });

  test(`refusals said as alerts and a batch in the Queue pass axe in the ${theme} theme`, async ({ page, launch }) => {
    const host = await launch(themedHome(theme));
    const { errors, live } = await open(page, host, theme);
    const found: string[] = [];
    await page.getByTestId('nav-studio').click();
    await page.getByTestId('tool-select').selectOption('upscaler-precision');
    await page.getByTestId('start').click();
    await expect(page.getByTestId('fix-fields')).toHaveText('Fix the fields marked in red.');
    found.push(...(await violations(page, 'studio with a refused Start', theme)));
    await page.getByTestId('nav-video').click();
    await page.getByTestId('submit').click();
    await expect(page.getByTestId('video-alert')).toContainText('Not submitted');
    found.push(...(await violations(page, 'video with a refused Submit', theme)));
    const dir = mkdtempSync(join(tmpdir(), 'md-a11y-'));
    await makeImages(dir, 2);
    await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
    await page.getByTestId('nav-queue').click();
    await expect(page.getByTestId('job-row')).toHaveCount(2);
    found.push(...(await violations(page, 'queue with a batch', theme)));
    await expectClean(found, live, errors);
  });
}
