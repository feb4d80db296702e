import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

/** axe-core's WCAG 2.x A/AA rules and its best practices: what every screen is held to (a11y.spec.ts). */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/**
 * axe over the page as it is now, or the part `include` selects; `rules` runs those rules alone instead
 * of the WCAG set. Each violation is a line: rule, impact, help and up to three of its elements. Only
 * violations are detailed (axe's `resultTypes`): a seventh less CPU for a11y.spec.ts's screens. axe runs
 * in the page (`setLegacyMode`: the app has no frames to walk), not in parts finished in a new page with
 * axe loaded three times a call: a11y.spec.ts took 49-65 CPU-s against 92-104, and 33 once axe stays in
 * the document (docs/TESTING.md).
 */
export async function axeViolations(page: Page, o: { include?: string; rules?: string[] } = {}): Promise<string[]> {
  // axe stays in the document once loaded: a no-op source then spares loading it twice again.
  const loaded = await page.evaluate(() => typeof (window as { axe?: { run?: unknown } }).axe?.run === 'function');
  let axe = new AxeBuilder({ page, ...(loaded ? { axeSource: ';' } : {}) })
    .setLegacyMode()
    .options({ resultTypes: ['violations'] });
  if (o.include) axe = axe.include(o.include);
  axe = o.rules ? axe.withRules(o.rules) : axe.withTags(WCAG_TAGS);
  const r = await axe.analyze();
  return r.violations.map(
    (v) =>
      `${v.id} (${v.impact}) ${v.help} at ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(' '))
        .join('; ')}`,
  );
}
