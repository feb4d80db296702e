import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { desk, newHome, watchErrors, watchLiveRegions, type HostHandle } from './host.ts';
import { makeImages } from './studio-helpers.ts';

/**
 * axe-core's WCAG 2.x A/AA rules over every screen, in both themes, empty and with content: no
 * violation of any impact. A rule axe cannot decide (contrast over an image) is not a violation.
 */
let host: HostHandle | undefined;

async function violations(page: Page, where: string): Promise<string[]> {
  const r = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return r.violations.map(
    (v) =>
      `${where}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(' '))
        .join('; ')}`,
  );
}

for (const theme of ['light', 'dark'] as const) {
  test(`every screen passes axe in the ${theme} theme`, async ({ page, launch }) => {
    const errors = watchErrors(page);
    const home = newHome();
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ theme }));
    host = await launch(home);
    const live = await watchLiveRegions(page);
    await page.goto(host.url);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    const ids = await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace('nav-', '')));
    const found: string[] = [];
    for (const id of ids) {
      await page.getByTestId(`nav-${id}`).click();
      await expect(page.getByTestId(`screen-${id}`)).toBeVisible();
      // Lists and charts that load after the screen opens are part of what is checked.
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(300);
      found.push(...(await violations(page, id)));
    }

    // With content: a synced audit log with an event open in the drawer.
    await page.getByTestId('nav-audit').click();
    await page.getByTestId('audit-sync').click();
    await expect(page.getByTestId('audit-sync-report')).toContainText('Sync complete', { timeout: 60_000 });
    await page.getByTestId('audit-row').first().dblclick();
    await expect(page.getByRole('heading', { level: 2, name: /\./ }).first()).toBeVisible();
    found.push(...(await violations(page, 'audit with an event open')));

    // Outcomes said: a refused Start and a refused Submit (alerts), a batch in the Queue.
    await page.getByTestId('nav-studio').click();
    await page.getByTestId('tool-select').selectOption('upscaler-precision');
    await page.getByTestId('start').click();
    await expect(page.getByTestId('fix-fields')).toHaveText('Fix the fields marked in red.');
    found.push(...(await violations(page, 'studio with a refused Start')));
    await page.getByTestId('nav-video').click();
    await page.getByTestId('submit').click();
    await expect(page.getByTestId('video-alert')).toContainText('Not submitted');
    found.push(...(await violations(page, 'video with a refused Submit')));
    const dir = mkdtempSync(join(tmpdir(), 'md-a11y-'));
    await makeImages(dir, 2);
    await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
    await page.getByTestId('nav-queue').click();
    await expect(page.getByTestId('job-row')).toHaveCount(2);
    found.push(...(await violations(page, 'queue with a batch')));
    expect(found).toEqual([]);
    // A status of work under way ("Loading…", "Contacting the API…") or of its outcome ("Sync
    // complete") never appears already saying it, where screen readers would often keep quiet.
    expect((await live()).bornFull.filter((t) => /…$|^Sync /.test(t))).toEqual([]);
    expect(errors).toEqual([]);
  });
}
