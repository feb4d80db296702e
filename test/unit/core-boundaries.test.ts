import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

const IMPORTS_ELECTRON = /(from\s+['"]electron['"]|require\(\s*['"]electron['"]\s*\)|import\(\s*['"]electron['"]\s*\))/;

describe('layering', () => {
  it.each(['electron/core', 'electron/sandbox', 'electron/host', 'shared'])('%s never imports electron', (dir) => {
    const offenders = files(dir).filter((f) => IMPORTS_ELECTRON.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the check itself recognises an electron import', () => {
    expect(IMPORTS_ELECTRON.test("import { app } from 'electron';")).toBe(true);
    expect(IMPORTS_ELECTRON.test("const { shell } = require('electron')")).toBe(true);
    expect(IMPORTS_ELECTRON.test("import x from 'electron-store'")).toBe(false);
  });

  it('shared never imports Node built-ins (it runs in the renderer)', () => {
    const offenders = files('shared').filter((f) => /from\s+['"](node:|fs['"]|path['"])/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
