import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
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

  it.each(['electron/sandbox', 'electron/media'])('%s never imports the core, a host or the shell', (dir) => {
    const offenders = files(dir).filter((f) => /from\s+['"](\.\.?\/)+(core|host|main)\//.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('shared never imports Node built-ins (it runs in the renderer)', () => {
    const offenders = files('shared').filter((f) => /from\s+['"](node:|fs['"]|path['"])/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});

/** Each table's statements live in its owner's store; the queue's shipped migrations made some of the others' tables. */
const TABLE_HOMES: Record<string, string[]> = {
  jobs: ['queue/store.ts', 'queue/migrations.ts'],
  batches: ['queue/store.ts', 'queue/migrations.ts'],
  queue_flags: ['queue/store.ts', 'queue/migrations.ts'],
  queue_lease: ['queue/store.ts', 'queue/migrations.ts'],
  app_runs: ['apps/store.ts', 'apps/migrations.ts', 'queue/migrations.ts'],
  app_families: ['apps/family.ts', 'apps/migrations.ts'],
  lora_trainings: ['lora-training/store.ts', 'lora-training/migrations.ts'],
  uploads: ['engine/uploader.ts', 'queue/migrations.ts'],
  prices_own: ['limits/prices.ts', 'queue/migrations.ts'],
  usage_ledger: ['analytics/ledger.ts', 'queue/migrations.ts'],
  usage_cache: ['analytics/ledger.ts', 'queue/migrations.ts'],
  limiter_grants: ['limits/limiter.ts', 'limits/migrations.ts', 'queue/migrations.ts'],
  limiter_daily_uses: ['limits/limiter.ts', 'limits/migrations.ts', 'queue/migrations.ts'],
  limiter_caps: ['limits/limiter.ts', 'limits/migrations.ts', 'queue/migrations.ts'],
  limiter_learned_caps: ['limits/limiter.ts', 'limits/migrations.ts', 'queue/migrations.ts'],
  hot_folders: ['hot-folders/store.ts', 'hot-folders/migrations.ts'],
  hot_folder_files: ['hot-folders/store.ts', 'hot-folders/migrations.ts'],
  deferred_indexes: ['audit/store/bulk-indexes.ts', 'audit/migrations.ts'],
};

/** The tables a source's SQL names (FROM, INTO, UPDATE, JOIN, TABLE). */
function tablesIn(source: string): Set<string> {
  return new Set([...source.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN|TABLE|EXISTS)\s+([a-z_]+)\b/g)].map((m) => m[1]));
}

describe('one home for each table', () => {
  it("every statement on a table is in its owner's store (or its shipped migrations)", () => {
    const strays = files('electron').flatMap((f) => {
      const rel = f
        .split(/[\\/]/)
        .join('/')
        .replace(/^electron\/core\//, '');
      return [...tablesIn(readFileSync(f, 'utf8'))]
        .filter((t) => TABLE_HOMES[t] && !TABLE_HOMES[t].includes(rel))
        .map((t) => `${t} in ${rel}`);
    });
    expect(strays).toEqual([]);
  });

  it('the check itself recognises a statement', () => {
    expect([...tablesIn("db.prepare('UPDATE jobs SET x = 1 WHERE id IN (SELECT id FROM batches)')")]).toEqual([
      'jobs',
      'batches',
    ]);
    expect(tablesIn('// jobs from batches').size).toBe(0);
  });
});

/** A chain of relative imports (type-only too) that comes back to its start, or null. */
function importCycle(dir: string): string[] | null {
  const graph = new Map(
    files(dir).map((f) => [
      normalize(f),
      [...readFileSync(f, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((m) =>
        join(dirname(f), m[1]),
      ),
    ]),
  );
  const done = new Set<string>();
  const visit = (f: string, path: string[]): string[] | null => {
    if (path.includes(f)) return [...path.slice(path.indexOf(f)), f];
    if (done.has(f) || !graph.has(f)) return null;
    for (const next of graph.get(f)!) {
      const found = visit(next, [...path, f]);
      if (found) return found;
    }
    done.add(f);
    return null;
  };
  for (const f of graph.keys()) {
    const found = visit(f, []);
    if (found) return found;
  }
  return null;
}

describe('no import cycles', () => {
  it('electron/core imports in one direction (a types.ts holds what a facade and its parts share)', () => {
    expect(importCycle('electron/core')).toBeNull();
  });
});

describe('one whole-file writer', () => {
  it('the core writes a file beside and renames it only through write-whole.ts (streams aside)', () => {
    const STREAMED = ['electron/core/downloads/download.ts', 'electron/core/audit/export.ts'];
    const offenders = files('electron/core')
      .map((f) => f.split(/[\\/]/).join('/'))
      .filter((f) => f !== 'electron/core/write-whole.ts' && !STREAMED.includes(f))
      .filter((f) => {
        const text = readFileSync(f, 'utf8');
        return /\bwriteFile(Sync)?\(/.test(text) && /\brename(Sync)?\(/.test(text);
      });
    expect(offenders).toEqual([]);
  });
});
