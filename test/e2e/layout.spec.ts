import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors, type HostHandle } from './host.ts';

let host: HostHandle;
test.afterAll(async () => {
  await host?.stop();
});

/**
 * Every screen at the smallest desktop window (1024x700) in both themes, and in a browser window
 * half a laptop screen wide (600x700, the web host), where the menu becomes a rail of glyphs:
 * nothing runs off the side of the window (the page never scrolls sideways), no control is cut off
 * at the right edge, and no visible column header is cut off by its table.
 */
const SIZES = [
  { width: 1024, theme: 'light' },
  { width: 1024, theme: 'dark' },
  { width: 600, theme: 'light' },
] as const;

for (const { width, theme } of SIZES) {
  test(`every screen fits ${width}x700 in the ${theme} theme`, async ({ page, launch }) => {
    const errors = watchErrors(page);
    const home = newHome();
    writeFileSync(join(home, 'settings.json'), JSON.stringify({ theme }));
    host = await launch(home);
    await page.setViewportSize({ width, height: 700 });
    await page.goto(host.url);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const entries = nav.getByRole('button');
    const ids = await entries.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.replace('nav-', '')));
    expect(ids.length).toBeGreaterThan(8);
    // The rail keeps each entry's name for assistive tech and as a tooltip.
    await expect(nav.getByRole('button', { name: 'Audit log' })).toBeVisible();
    const navWidth = (await nav.boundingBox())!.width;
    if (width < 1024) {
      expect(navWidth).toBeLessThan(64);
      await expect(nav.getByRole('button', { name: 'Audit log' })).toHaveAttribute('title', 'Audit log');
    } else expect(navWidth).toBeGreaterThan(150);
    for (const id of ids) {
      await page.getByTestId(`nav-${id}`).click();
      await expect(page.getByTestId(`screen-${id}`)).toBeVisible();
      // Kept: a screen's late-loading parts widen it with no event to wait on; 150 ms lets them land.
      await page.waitForTimeout(150);
      const overflow = await page.evaluate(() => {
        const doc = document.documentElement.scrollWidth;
        const shown = (el: Element) => {
          const r = el.getBoundingClientRect();
          return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
        };
        // Visible interactive elements whose right edge is past the window.
        const cut = [...document.querySelectorAll('button, input, select, textarea, a')]
          .filter((el) => shown(el) && el.getBoundingClientRect().right > window.innerWidth + 1)
          .map((el) => el.outerHTML.slice(0, 80));
        const clipped = [...document.querySelectorAll('[role="columnheader"]')]
          .filter(
            (el) =>
              shown(el) &&
              el.getBoundingClientRect().right >
                el.closest('[role="grid"], [role="table"]')!.getBoundingClientRect().right + 1,
          )
          .map((el) => (el as HTMLElement).innerText);
        return { doc, cut, clipped };
      });
      expect(overflow.doc, `${id}: page width`).toBeLessThanOrEqual(width);
      expect(overflow.cut, `${id}: controls past the right edge`).toEqual([]);
      expect(overflow.clipped, `${id}: column headers cut off by their table`).toEqual([]);
    }
    expect(errors).toEqual([]);
    await host.stop();
  });
}
