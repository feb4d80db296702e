import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../shared/contract/index.ts';

// The build npm test makes before vitest (out/renderer): what a page loads before its first screen.
const renderer = join(import.meta.dirname, '..', '..', 'out', 'renderer');

describe("the renderer's first load", () => {
  it("holds no command's schema: what the screens use comes from the contract's zod-free modules", () => {
    const html = readFileSync(join(renderer, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(1);
    const code = scripts.map((file) => readFileSync(join(renderer, file), 'utf8')).join('\n');
    // Each command's summary is written once, beside its schemas: none may reach the page's first load.
    const summaries = Object.values(COMMANDS).map((c) => c.summary);
    expect(summaries.length).toBeGreaterThan(50);
    expect(summaries.filter((s) => code.includes(JSON.stringify(s).slice(1, -1)) || code.includes(s))).toEqual([]);
  });
});
