import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { newHome, startHost, watchErrors, type HostHandle } from './host.ts';

let host: HostHandle;
test.afterAll(async () => {
  await host?.stop();
});

/**
 * Every screen at the smallest supported window (1024x700), in both themes: nothing runs off the
 * side of the window (the page never scrolls sideways) and no control is cut off at the right edge.
 */
for (const theme of ['light', 'dark'] as const) {
  test(`every screen fits 1024x700 in the ${theme} theme`, async ({ page }) => {
    const errors = watchErrors(page);
    const home = newHome();
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ theme }));
    host = await startHost(home);
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.goto(host.url);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    const entries = page.getByRole('navigation', { name: 'Main' }).getByRole('button');
    const ids = await entries.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace('nav-', '')));
    expect(ids.length).toBeGreaterThan(8);
    for (const id of ids) {
      await page.getByTestId(`nav-${id}`).click();
      await expect(page.getByTestId(`screen-${id}`)).toBeVisible();
      await page.waitForTimeout(150);
      const overflow = await page.evaluate(() => {
        const doc = document.documentElement.scrollWidth;
        // Visible interactive elements whose right edge is past the window.
        const cut = [...document.querySelectorAll('button, input, select, textarea, a')]
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && r.height > 0 && r.right > window.innerWidth + 1 && getComputedStyle(el).visibility !== 'hidden';
          })
          .map((el) => el.outerHTML.slice(0, 80));
        return { doc, cut };
      });
      expect(overflow.doc, `${id}: page width`).toBeLessThanOrEqual(1024);
      expect(overflow.cut, `${id}: controls past the right edge`).toEqual([]);
    }
    expect(errors).toEqual([]);
    await host.stop();
  });
}
