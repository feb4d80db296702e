import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditStore as SandboxAudit, publicEvent } from '../../electron/sandbox/audit-store.ts';
import { buildTeam } from '../../electron/sandbox/team.ts';
import { runCli } from '../cli.ts';
import { tempDir } from './helpers.ts';

// `mediadesk audit query --search` over the Sandbox's own events, imported into a real cache; no API is reached.
const tmp = tempDir('md-audit-cli-search-');
const env = { MEDIADESK_HOME: join(tmp.dir, 'home'), MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: 'x' };
const audit = (...args: string[]) => runCli(['audit', ...args], { env });
const team = buildTeam(3);
const events = new SandboxAudit(team, 3, Date.UTC(2026, 10, 27)).events.map(publicEvent);

beforeAll(async () => {
  const r = await audit('import', tmp.file('events.ndjson', events.map((e) => JSON.stringify(e)).join('\n') + '\n'));
  expect(r.code, r.err).toBe(0);
}, 60_000);
afterAll(() => tmp.cleanup());

const ids = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { event_id: string }).event_id);

describe('mediadesk audit query --search', () => {
  it('matches part of an event type and a surname inside an e-mail', async () => {
    const types = await audit('query', '--search', 'role_chan', '--limit', '100000', '--json');
    expect(types.code, types.err).toBe(0);
    const want = events.filter((e) => (e.action as { event_type: string }).event_type === 'team.member.role_changed');
    expect(new Set(ids(types.out))).toEqual(new Set(want.map((e) => e.event_id)));

    const member = team.members.find(
      (m) => m.id > 3 && events.some((e) => (e.member as { email: string | null }).email === m.email),
    )!;
    const surname = member.name.split(' ')[1];
    const theirs = await audit('query', '--search', surname, '--limit', '100000');
    expect(theirs.code, theirs.err).toBe(0);
    const lines = theirs.out.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.toLowerCase()).toContain(`.${surname.toLowerCase()}.`);
  });

  it('says why nothing matched and what to try', async () => {
    const r = await audit('query', '--search', 'zzqxv', '--event-type', 'team.member.invited');
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^0 of 0 event\(s\)\nNo events match “zzqxv” in the [\d,]+ cached events from [^\n]+\d{4} to [^\n]+\d{4}\. Try part of a name, e-mail or event type, or dropping the filter options \(1 active: event type team\.member\.invited\)\.\n$/,
    );
  });
});
