import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { desk, newHome, startHost } from '../e2e/host.ts';

describe("a spec's web host in the test's own process (startHost)", () => {
  it('answers over HTTP, refuses what only a process has by naming ownProcess, and stops as its entry does', async () => {
    const home = newHome();
    const host = await startHost(home);
    try {
      expect((await desk<{ backend: { effective: string } }>(host, 'app.info')).backend.effective).toBe('sandbox');
      expect(() => host.child).toThrow(/ownProcess: true/);
      expect(() => host.output()).toThrow(/its output needs startHost\(…, \{ ownProcess: true \}\)/);
      expect(() => host.stderr()).toThrow(/ownProcess: true/);
      expect(() => host.stop('SIGKILL')).toThrow(/stopping it with SIGKILL/);
      // A second host while this one runs gets a process of its own.
      const second = await startHost(newHome());
      expect(second.child.pid).toBeGreaterThan(0);
      await second.stop();
    } finally {
      await host.stop();
    }
    // As bin/web.js on SIGTERM: the port stays remembered for the next start; a second stop returns the first's.
    const record = JSON.parse(readFileSync(join(home, 'web-host.json'), 'utf8'));
    expect(record).toEqual({ port: Number(new URL(host.origin).port) });
    await host.stop();
  });
});
