import { describe, expect, it } from 'vitest';
import { createDispatcher } from '../../electron/core/dispatch.ts';
import { applyOverrides, mergeHandlers } from '../../electron/core/merge-handlers.ts';

const info = (version: string) => ({
  'app.info': () => ({ version }) as never,
});

describe("the core's handler map, merged from one part per contract area", () => {
  it('refuses a command two parts serve, naming it, instead of keeping the later one', () => {
    const jobs = { 'batches.start': () => ({ batch: null, queued: 0 }) as never };
    const estimates = { 'batches.start': () => ({ batch: null, queued: 1 }) as never };
    expect(() => mergeHandlers(info('1'), jobs, estimates)).toThrow(
      '"batches.start" is served by two handler parts: each command has one handler',
    );
  });

  it('refuses a part serving a command the contract does not define', () => {
    expect(() => mergeHandlers({ 'batches.begin': () => ({}) } as never)).toThrow(
      'a handler part serves "batches.begin", which the contract does not define',
    );
  });

  it('keeps every part whole when no command repeats', () => {
    const merged = mergeHandlers(info('1'), { 'jobs.pause': () => ({}) as never });
    expect(Object.keys(merged).sort()).toEqual(['app.info', 'jobs.pause']);
  });
});

describe("a host's overrides, the one allowed replacement", () => {
  it('replace the commands the host serves itself, and add one the core does not serve', async () => {
    const handlers = applyOverrides(mergeHandlers(info('core')), {
      ...info('host'),
      'files.choose': () => ({ paths: [] }),
    });
    const dispatch = createDispatcher(handlers);
    expect(await dispatch('files.choose', { kind: 'files' })).toEqual({ ok: true, result: { paths: [] } });
    expect(handlers['app.info']?.({})).toEqual({ version: 'host' });
  });

  it('refuse a command the contract does not define', () => {
    expect(() => applyOverrides(mergeHandlers(info('core')), { 'shell.openPath': () => ({}) } as never)).toThrow(
      'the host overrides "shell.openPath", which the contract does not define',
    );
  });
});
