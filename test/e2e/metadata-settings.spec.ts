import { expect, test } from './fixtures.ts';
import { desk, newHome, watchErrors, type HostHandle } from './host.ts';

let host: HostHandle;

test('Settings, Metadata: three switches, each said in one line, saved for the next batch', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.goto(`${host.url}#settings`);
  const section = page.getByTestId('metadata-settings');
  await expect(section.getByRole('heading', { name: 'Metadata' })).toBeVisible();
  const keep = section.getByRole('checkbox', { name: 'Keep the photo’s details' });
  const record = section.getByRole('checkbox', { name: 'Record how each result was made' });
  const sidecar = section.getByRole('checkbox', { name: 'Also save that record beside the result' });
  await expect(keep).toBeChecked();
  await expect(record).toBeChecked();
  await expect(sidecar).not.toBeChecked();
  await expect(keep).toHaveAccessibleDescription(
    'Copies camera, dates, orientation, colour profile, keywords and captions from each file into its results.',
  );

  await keep.uncheck();
  await expect(page.getByTestId('saved')).toHaveText('Saved: keep the photo’s details.');
  await sidecar.check();
  await expect(page.getByTestId('saved')).toHaveText('Saved: save that record beside the result.');
  expect(await desk(host, 'settings.get')).toMatchObject({
    keepMetadata: false,
    writeProvenance: true,
    provenanceSidecar: true,
  });
  await page.reload();
  await expect(keep).not.toBeChecked();
  await expect(sidecar).toBeChecked();
  expect(errors).toEqual([]);
});
