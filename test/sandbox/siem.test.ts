import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { SANDBOX_HEC_TOKEN } from '../../electron/sandbox/siem.ts';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());
beforeEach(async () => {
  await fetch(`${sb.url}/__sandbox/siem/reset`, { method: 'POST' });
  await fetch(`${sb.url}/__sandbox/reset`, { method: 'POST' });
});

const hec = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${sb.url}/services/collector/event`, {
    method: 'POST',
    headers: { authorization: `Splunk ${SANDBOX_HEC_TOKEN}`, 'x-splunk-request-channel': 'c1', ...headers },
    body,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
const env = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ time: 1767225600.5, host: 'h', source: 's', sourcetype: 'st', event: { event_id: id }, ...extra });
const bulk = (lines: string[], path = '/audit/_bulk') =>
  fetch(`${sb.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    body: lines.join('\n') + '\n',
  }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as { errors: boolean; items: Record<string, { status: number }>[] },
  }));

describe('HEC stand-in', () => {
  it('checks the token and the channel', async () => {
    expect((await hec(env('a'), { authorization: '' })).body).toMatchObject({ code: 2 });
    expect(await hec(env('a'), { authorization: 'Splunk nope' })).toMatchObject({ status: 403, body: { code: 4 } });
    expect(await hec(env('a'), { 'x-splunk-request-channel': '' })).toMatchObject({ status: 400, body: { code: 10 } });
  });

  it('takes concatenated envelopes and confirms the ack from its second poll', async () => {
    const r = await hec(`${env('a')}${env('b')}\n${env('c')}`);
    expect(r).toMatchObject({ status: 200, body: { code: 0, ackId: expect.any(Number) } });
    const poll = () =>
      fetch(`${sb.url}/services/collector/ack?channel=c1`, {
        method: 'POST',
        headers: { authorization: `Splunk ${SANDBOX_HEC_TOKEN}` },
        body: JSON.stringify({ acks: [r.body.ackId] }),
      }).then((x) => x.json());
    expect(await poll()).toEqual({ acks: { [String(r.body.ackId)]: false } });
    expect(await poll()).toEqual({ acks: { [String(r.body.ackId)]: true } });
    expect((await (await fetch(`${sb.url}/__sandbox/siem/hec/ids`)).json()).ids).toEqual(['a', 'b', 'c']);
  });

  it('refuses an envelope outside the protocol by its number, indexing those before it', async () => {
    const r = await hec(`${env('a')}${env('b', { extra: 1 })}${env('c')}`);
    expect(r).toMatchObject({ status: 400, body: { code: 6, 'invalid-event-number': 1 } });
    expect((await hec(JSON.stringify({ time: 1 }))).body).toMatchObject({ code: 12 });
    await fetch(`${sb.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ siemRefuse: ['z'] }) });
    expect((await hec(`${env('y')}${env('z')}`)).body).toMatchObject({ code: 6, 'invalid-event-number': 1 });
    const s = await (await fetch(`${sb.url}/__sandbox/siem`)).json();
    expect(s.hec).toMatchObject({ unique: 2, refusedEvents: 1 });
  });
});

describe('_bulk stand-in', () => {
  it('creates each _id once: a second create is an item 409, a refused event an item 400', async () => {
    await fetch(`${sb.url}/__sandbox/faults`, { method: 'POST', body: JSON.stringify({ siemRefuse: ['r'] }) });
    const a = await bulk(['{"create":{"_id":"a"}}', '{"event_id":"a"}', '{"create":{"_id":"r"}}', '{"event_id":"r"}']);
    expect(a.body.items.map((i) => i.create.status)).toEqual([201, 400]);
    const b = await bulk(['{"create":{"_id":"a"}}', '{"event_id":"a"}']);
    expect(b.body).toMatchObject({ errors: true, items: [{ create: { status: 409 } }] });
    expect((await bulk(['not json', '{}'])).status).toBe(400);
    expect((await bulk(['{"create":{"_id":"x"}}', '{"event_id":"x"}'], '/_bulk')).status).toBe(400);
  });

  it('fails a share of requests with 429 and Retry-After when asked', async () => {
    await fetch(`${sb.url}/__sandbox/faults`, {
      method: 'POST',
      body: JSON.stringify({ siemRate429: 1, retryAfterSec: 7 }),
    });
    const r = await fetch(`${sb.url}/audit/_bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: '{"create":{}}\n{}\n',
    });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
  });
});
