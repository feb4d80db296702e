import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_KEEPS, TaskStore, type Task } from '../../electron/sandbox/tasks.ts';

const dir = mkdtempSync(join(tmpdir(), 'task-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const taskOf = (store: TaskStore, n: number): Task => ({
  id: store.newId(),
  toolId: 'upscaler-precision',
  listPath: '/v1/ai/image-upscaler-precision-v2',
  key: 'sandbox-owner',
  userId: 1,
  createdAt: 1_700_000_000_000 + n,
  durationMs: 10,
  fails: false,
  params: { n },
  resultCount: 1,
  resultKind: 'image',
  reached: 0,
});

describe("the built-in Sandbox's task journal", () => {
  it('reads tasks back after a restart, skips a line cut short, and keeps only the newest', () => {
    const journal = join(dir, 'sandbox-tasks.ndjson');
    const first = new TaskStore(1, journal);
    const total = JOURNAL_KEEPS + 7;
    const ids: string[] = [];
    for (let n = 0; n < total; n++) ids.push(first.add(taskOf(first, n)).id);
    appendFileSync(journal, '{"id":"cut-sho');

    const second = new TaskStore(1, journal);
    expect(second.size).toBe(JOURNAL_KEEPS);
    expect(second.get(ids[6])).toBeUndefined();
    expect(second.get(ids[7])?.params).toEqual({ n: 7 });
    expect(second.get(ids[total - 1])?.params).toEqual({ n: total - 1 });
    const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(JOURNAL_KEEPS);
    expect(ids).not.toContain(second.newId());
  });
});
