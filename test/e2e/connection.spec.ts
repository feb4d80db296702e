import { axeViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors, watchLiveRegions, type HostHandle } from './host.ts';

let host: HostHandle;

test('Settings: Test connection checks the backend in use, and names a model path segment the service does not know', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const live = await watchLiveRegions(page);
  await page.goto(`${host.url}#settings`);

  const backend = page.getByRole('region', { name: 'Backend' });
  await backend.getByRole('button', { name: 'Test connection' }).click();
  const summary = page.getByTestId('connection-summary');
  await expect(summary).toHaveText(/^All (\d+) checks passed against the built-in Sandbox\.$/);
  const total = Number(/All (\d+)/.exec((await summary.textContent())!)![1]);
  const checks = page.getByTestId('connection-check');
  await expect(checks).toHaveCount(total);
  await expect(checks.first()).toContainText('Host: http://127.0.0.1:');
  await expect(checks.nth(1)).toContainText(
    'API key: the Sandbox identity sandbox-owner, sent in x-magnific-api-key: accepted',
  );
  await expect(page.locator('[data-testid=connection-check][data-ok=false]')).toHaveCount(0);
  // Said, not only shown: the list is in a live region that was there before it, each line with its outcome in words.
  await expect(page.getByRole('status').filter({ has: page.getByTestId('connection-checks') })).toHaveAttribute(
    'aria-live',
    'polite',
  );
  await expect(page.getByRole('list', { name: 'Connection checks' }).getByRole('listitem').first()).toContainText(
    'Passed: Host',
  );
  expect((await live()).spoke.some((t) => t.startsWith(`All ${total} checks passed`))).toBe(true);

  // A wrong segment in the Model path segments section: the earlier result no longer holds and goes.
  await page.getByText('Model path segments').click();
  const slug = page.getByTestId('slug-premium_generator');
  await slug.fill('no-such-model');
  await slug.blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: model path segments.');
  await expect(page.getByTestId('connection-checks')).toBeHidden();

  await page.getByTestId('connection-test').click();
  await expect(summary).toHaveText(`1 of ${total} checks failed against the built-in Sandbox.`);
  const bad = page.locator('[data-testid=connection-check][data-ok=false]');
  await expect(bad).toHaveCount(1);
  await expect(bad).toContainText('Failed: High-resolution generator');
  await expect(bad.getByTestId('connection-check-detail')).toHaveText(
    'GET /v1/ai/no-such-model: 404 Not found, the service has no such model path',
  );
  await expect(bad.getByTestId('connection-check-fix')).toHaveText(
    'The model path segment premium_generator is "no-such-model" (the default is "mystic"): clear premium_generator under Settings > Model path segments to use the default, or run mediadesk settings set \'slugs={}\'.',
  );

  expect(await axeViolations(page, { include: '[data-testid=connection-status]' })).toEqual([]);
  expect(errors).toEqual([]);
});
