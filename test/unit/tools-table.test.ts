import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README, readmeTable, TOOLS_DOC, toolsDoc, withTable } from '../../scripts/tools-table.ts';
import { ALL_TOOLS } from '../../shared/catalogue/index.ts';

/** The README's tool table and docs/TOOLS.md are what `npm run tools:table` makes of the catalogue. */
describe('the tool tables', () => {
  it('README.md holds the table the catalogue makes (run npm run tools:table after reference:update)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toContain(readmeTable());
    expect(withTable(readme, readmeTable())).toBe(readme);
  });

  it('docs/TOOLS.md lists every tool, as the catalogue makes it', () => {
    const doc = readFileSync(TOOLS_DOC, 'utf8');
    expect(doc).toBe(toolsDoc());
    for (const t of ALL_TOOLS) expect(doc).toContain(`| \`${t.id}\` |`);
    expect(doc).toMatch(
      /\| `text-to-icon` \| Text to icon \| `\/v1\/ai\/text-to-icon` \| parameters only \| cannot run: /,
    );
  });
});
