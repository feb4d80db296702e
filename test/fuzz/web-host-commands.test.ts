// Property-based: every contract command, sent random, malformed, deep and huge payloads over the
// real WebSocket of a started web host, and through the dispatcher in-process as the CLI calls it.
// Each within the size limit is answered (an error, or a valid answer), one over it closes its socket
// with 1009, the host stays up, and a valid command is still served afterwards. FC_SEED=<n> replays a run; the seed is printed as the file starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { startWebHost } from '../../electron/host/web/server.ts';
import { COMMAND_NAMES, COMMANDS, ERROR_CODES, type CommandName } from '../../shared/contract/index.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/socket-limit.ts';
import { deepEventLine, makeEvent, rowOf } from '../audit/helpers.ts';
import { deepText, fuzzRuns, hostileString, hostileValue } from './fuzz.ts';

fuzzRuns('test/fuzz/web-host-commands.test.ts', { numRuns: 200, timeMs: 25_000 });

/**
 * Commands that only read (or write a cache of their own: thumbnails, the LoRA list, the usage
 * ledger of this test's data folder): any payload their schema takes may reach the handler.
 */
const READS = new Set<CommandName>([
  'audit.status',
  'audit.query',
  'audit.event',
  'audit.facets',
  'audit.timeline',
  'app.info',
  'settings.get',
  'settings.file',
  'key.status',
  'media.thumbnail',
  'loras.list',
  'loras.trainings',
  'apps.mine',
  'batches.list',
  'batches.report',
  'batches.estimate',
  'apps.estimate',
  'jobs.list',
  'jobs.status',
  'apps.list',
  'apps.get',
  'apps.runs',
  'usage.query',
  'usage.breakdown',
  'usage.budget',
  'team.directory',
  'creations.list',
  'hotFolders.list',
  'limits.status',
  'presets.list',
  'prices.list',
  'audit.forwardStatus',
  'audit.sinkRefused',
  'teamServer.status',
  'teamServer.spend',
]);

/**
 * Commands with effects a random payload must not set off: they get only payloads their schema
 * refuses (checked here before sending), so no handler of theirs runs.
 */
const EFFECTS: Partial<Record<CommandName, string>> = {
  'audit.sync': 'starts a sync',
  'audit.syncCancel': 'stops a running sync',
  'audit.import': 'reads an uploaded file into the cache',
  'audit.importCancel': 'stops a running import',
  'audit.export': 'writes an export file',
  'settings.set': 'writes the settings file',
  'audit.forward': 'sends the cached audit log to every sink',
  'audit.sinkSave': 'writes a sink to the settings and its secret to the keychain',
  'audit.sinkRemove': 'forgets a sink and its secret',
  'teamServer.test': 'connects to the team server and migrates its schema',
  'teamServer.connect': 'writes the team server to the settings and its password to the keychain',
  'teamServer.disconnect': 'forgets the team server and its password',
  'teamServer.setBudget': "writes the team's or a project's budget on the team server",
  'limits.setCap': "writes the user's daily caps",
  'prices.set': "writes the user's own prices",
  'prices.reset': "drops the user's own prices",
  'key.set': 'writes the OS keychain',
  'key.clear': 'deletes the key from the OS keychain',
  'connection.test': 'probes every model path of the backend (slow)',
  'shell.open': 'opens a file with the OS',
  'shell.reveal': 'opens the OS file manager',
  'shell.openFolder': 'opens the OS file manager (and makes a folder)',
  'files.choose': "opens the desktop app's open dialog (not served here)",
  'batches.start': 'queues paid work',
  'batches.check': 'walks any folder named',
  'batches.cancel': 'cancels jobs',
  'batches.retry': 'queues work again',
  'batches.setBudget': 'changes what a batch may spend, and lets a held one go on',
  'jobs.pause': 'pauses the queue',
  'jobs.resume': 'resumes the queue',
  'jobs.cancel': 'cancels a job',
  'jobs.retry': 'queues a job again',
  'media.check': 'probes the sources named (files, addresses)',
  'apps.check': 'reads the local files named as inputs',
  'apps.run': 'queues a paid run',
  'loras.trainCheck': 'walks any folder named and reads its images',
  'loras.train': 'queues a paid training',
  'apps.cancel': 'stops a run',
  'apps.retry': 'queues a run again',
  'team.export': 'writes an export file',
  'creations.download': 'downloads a creation',
  'batches.exportReport': 'writes a report file',
  'hotFolders.add': 'watches any folder named and queues its images',
  'hotFolders.setSettle': "changes a hot folder's wait before taking a file",
  'hotFolders.setShared': 'shares a hot folder with the team, or stops',
  'hotFolders.pause': 'stops watching a hot folder',
  'hotFolders.resume': 'watches a hot folder again',
  'hotFolders.remove': 'forgets a hot folder',
  'presets.save': 'writes the presets file',
  'presets.remove': 'forgets a preset',
  'presets.export': 'writes an export file',
  'presets.import': 'adds presets',
  'support.report': 'writes a problem report zip',
};

const home = mkdtempSync(join(tmpdir(), 'md-fuzz-cmd-'));
const host = await startWebHost({ home, env: {} });
// Events for the audit commands to find: well-formed ones, and a hostile one as an older cache holds it.
host.core.audit.store.insertBatch(
  [
    rowOf(makeEvent(0)),
    rowOf(makeEvent(1)),
    { ...rowOf(makeEvent(2, { event_id: 'evt_deep' })), raw: deepEventLine(2).replace('"evt_2"', '"evt_deep"') },
  ],
  'import',
);
afterAll(async () => {
  await host.close();
  rmSync(home, { recursive: true, force: true });
});

interface Answer {
  id: unknown;
  ok: unknown;
  result?: unknown;
  error?: { code: unknown; message: unknown };
}

/** One authenticated socket; `ask` sends a message's text and resolves with the reply of its id. */
async function openSocket() {
  const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`, {
    maxPayload: 256 * 1024 * 1024,
  });
  const waiting = new Map<number, (a: Answer) => void>();
  ws.on('message', (m) => {
    const msg = JSON.parse(String(m)) as Answer & { event?: string };
    if (msg.event === undefined && typeof msg.id === 'number') waiting.get(msg.id)?.(msg);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let next = 0;
  const ask = (cmd: string, payloadText: string): Promise<Answer> => {
    const id = ++next;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${cmd} within 15 s`)), 15_000);
      waiting.set(id, (a) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(a);
      });
      ws.send(`{"id":${id},"cmd":${JSON.stringify(cmd)},"payload":${payloadText}}`);
    });
  };
  return { ws, ask };
}

/** The top-level fields of a request schema (an object, or an object with checks after it). */
function fieldsOf(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  const def = (schema as unknown as { _zod: { def: { type: string; in?: z.ZodType; innerType?: z.ZodType } } })._zod
    .def;
  if (def.type === 'pipe' && def.in) return fieldsOf(def.in);
  if (def.innerType) return fieldsOf(def.innerType);
  return [];
}

/** Strings a field may well take (dates, small names), so that many payloads reach the handler. */
const plausible = fc.constantFrom('team', '2026-03-01', '2026-03-01T10:00:00Z', 'day', 'user', 'a', '1', 'evt_0');
/** The ids the cache holds, the hostile one among them: what a field named `…id` or `…Id` is mostly given. */
const cachedId = fc.constantFrom('evt_0', 'evt_1', 'evt_deep');

type ZodDef = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, unknown>;
  values?: unknown[];
  valueType?: z.ZodType;
};

/**
 * Values of a request schema's own shape, each string hostile or plausible, each number anything
 * from 0 to 1e308: payloads that pass the schema (or miss it by a field) and reach the handler.
 */
function fromSchema(schema: z.ZodType, depth = 0, field = ''): fc.Arbitrary<unknown> {
  const def = (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
  if (depth > 6) return hostileValue;
  const inner = (t: z.ZodType | undefined, name = field) => (t ? fromSchema(t, depth + 1, name) : hostileValue);
  switch (def.type) {
    case 'object': {
      const shape = def.shape ?? {};
      return fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, inner(v, k)])), {
        requiredKeys: [],
      });
    }
    case 'string':
      return /id$/i.test(field)
        ? fc.oneof({ arbitrary: cachedId, weight: 3 }, hostileString)
        : fc.oneof({ arbitrary: plausible, weight: 2 }, hostileString);
    case 'number':
      return fc.oneof(fc.integer({ min: -2, max: 1200 }), fc.constantFrom(0, 1, 50, 1e308, -1, 2 ** 53, 0.5));
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries ?? {}));
    case 'literal':
      return fc.constantFrom(...(def.values ?? [null]));
    case 'array':
      return fc.array(inner(def.element), { maxLength: 4 });
    case 'optional':
    case 'default':
      return fc.option(inner(def.innerType), { nil: undefined });
    case 'nullable':
      return fc.option(inner(def.innerType), { nil: null });
    case 'union':
      return fc.oneof(...(def.options ?? []).map((o) => inner(o)));
    case 'record':
      return fc.dictionary(fc.oneof(plausible, hostileString), inner(def.valueType), { maxKeys: 4 });
    case 'pipe':
      return inner(def.in);
    default:
      return hostileValue;
  }
}

/**
 * A payload's JSON text for `cmd`: one of its schema's shape with hostile strings, anything, its
 * own fields with hostile values, or nesting thousands deep.
 */
function payloadText(cmd: CommandName): fc.Arbitrary<string> {
  const fields = fieldsOf(COMMANDS[cmd].request);
  const key = fields.length ? fc.oneof(fc.constantFrom(...fields), hostileString) : hostileString;
  return fc.oneof(
    { arbitrary: fromSchema(COMMANDS[cmd].request).map((v) => JSON.stringify(v) ?? 'null'), weight: 8 },
    hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
    fc.dictionary(key, hostileValue, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
    fc
      .tuple(key, fc.integer({ min: 100, max: 20_000 }), fc.constantFrom('[', '{'))
      .map(([k, n, open]) => `{${JSON.stringify(k)}:${deepText(n, open, open === '[' ? ']' : '}')}}`),
    fc.integer({ min: 100, max: 20_000 }).map((n) => deepText(n)),
  );
}

/** Whether the dispatcher would pass this payload to the handler (as it reads it: `payload ?? {}`). */
function reachesHandler(cmd: CommandName, payload: unknown): boolean {
  try {
    return COMMANDS[cmd].request.safeParse(payload ?? {}).success;
  } catch {
    // The dispatcher answers a schema that throws with an error, never running the handler.
    return false;
  }
}

/** The text to send to a command with effects: a payload its schema refuses, or null when none was found. */
function refusedOnly(cmd: CommandName, text: string): string | null {
  for (const t of [text, `[${text}]`]) if (!reachesHandler(cmd, JSON.parse(t))) return t;
  return null;
}

function checkAnswer(cmd: CommandName, a: Answer, reached: boolean): void {
  expect(typeof a.ok, cmd).toBe('boolean');
  if (a.ok) {
    expect(reached, `${cmd} answered ok to a payload its schema refuses`).toBe(true);
    expect(Object.hasOwn(a, 'result'), cmd).toBe(true);
  } else {
    expect(ERROR_CODES, cmd).toContain(a.error?.code);
    expect(typeof a.error?.message, cmd).toBe('string');
  }
}

const command = fc.constantFrom(...COMMAND_NAMES);
/**
 * A message to one of `names`, those that read the audit cache as likely as all the others: they
 * serve what an imported file (or an older cache) put there, the rest serve the app's own data.
 */
const messageTo = (names: CommandName[]) => {
  const audit = names.filter((n) => n.startsWith('audit.'));
  const pick = audit.length
    ? fc.oneof(fc.constantFrom(...names), fc.constantFrom(...audit))
    : fc.constantFrom(...names);
  return pick.chain((cmd) => payloadText(cmd).map((text) => ({ cmd, text })));
};

describe('every contract command under hostile payloads', () => {
  it('each command is either read-only or kept to payloads its schema refuses', () => {
    for (const name of COMMAND_NAMES)
      expect([name, READS.has(name) !== Object.hasOwn(EFFECTS, name)]).toEqual([name, true]);
  });

  it("over the web host's socket: every message is answered, the host stays up, and serves a valid command afterwards", async () => {
    const { ws, ask } = await openSocket();
    try {
      // The commands that read: anything may reach their handlers.
      await fc.assert(
        fc.asyncProperty(messageTo([...READS]), async ({ cmd, text }) => {
          checkAnswer(cmd, await ask(cmd, text), reachesHandler(cmd, JSON.parse(text)));
        }),
      );
      // The commands with effects: the same payloads, those their schema would take sent inside an array, which it refuses.
      await fc.assert(
        fc.asyncProperty(messageTo(COMMAND_NAMES.filter((c) => !READS.has(c))), async ({ cmd, text }) => {
          const sent = refusedOnly(cmd, text);
          fc.pre(sent !== null);
          checkAnswer(cmd, await ask(cmd, sent!), false);
        }),
        { numRuns: 100 },
      );
      // Unknown names and hostile command names, too (an empty one is refused before any id is read: web-host.test.ts).
      await fc.assert(
        fc.asyncProperty(hostileString, async (cmd) => {
          fc.pre(cmd !== '' && !Object.hasOwn(COMMANDS, cmd));
          const a = await ask(cmd, '{}');
          expect([a.ok, a.error?.code]).toEqual([false, 'not_found']);
        }),
        { numRuns: 50 },
      );
      const after = await ask('settings.get', '{}');
      expect(after).toMatchObject({ ok: true, result: { concurrency: expect.any(Number) } });
    } finally {
      ws.close();
    }
    expect((await fetch(`${host.origin}/healthz`)).status).toBe(200);
  }, 50_000);

  it('over the socket, around the size limit: a message up to it is answered, one over it closes the socket with 1009, and a new socket is served', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...READS),
        fc.integer({ min: -64 * 1024, max: 64 * 1024 }),
        fc.constantFrom('x', '\\n', '界'),
        async (cmd, over, unit) => {
          const { ws, ask } = await openSocket();
          ws.on('error', () => {});
          const envelope = Buffer.byteLength(`{"id":1,"cmd":${JSON.stringify(cmd)},"payload":{"pad":""}}`);
          const unitBytes = Buffer.byteLength(unit);
          const pad = unit.repeat(Math.floor((MAX_MESSAGE_BYTES + over - envelope) / unitBytes));
          const size = envelope + pad.length * (unitBytes / unit.length);
          const closed = new Promise<number>((resolve) => ws.once('close', resolve));
          // A closed socket leaves its ask unanswered: its timeout is no failure of its own here.
          const answered = ask(cmd, `{"pad":"${pad}"}`).catch((e: Error) => e.message);
          const outcome = await Promise.race([answered, closed]);
          // 1006 when the host ends the socket while this side is still writing: closed unread all the same.
          if (size > MAX_MESSAGE_BYTES) expect([1009, 1006], `${size} bytes`).toContain(outcome);
          else checkAnswer(cmd, outcome as Answer, reachesHandler(cmd, { pad: JSON.parse(`"${pad}"`) }));
          ws.close();
          const next = await openSocket();
          expect(await next.ask('settings.get', '{}')).toMatchObject({ ok: true });
          next.ws.close();
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);

  it('through the dispatcher in-process, as the CLI calls it: values built deep (not via JSON) are answered too', async () => {
    const deepValue = fc.tuple(fc.integer({ min: 100, max: 50_000 }), fc.boolean()).map(([n, arrays]) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < n; i++) v = arrays ? [v] : { a: v };
      return v;
    });
    const payload = (cmd: CommandName) => {
      const fields = fieldsOf(COMMANDS[cmd].request);
      return fc.oneof(
        { arbitrary: fromSchema(COMMANDS[cmd].request), weight: 3 },
        hostileValue,
        deepValue,
        fields.length ? fc.tuple(fc.constantFrom(...fields), deepValue).map(([k, v]) => ({ [k]: v })) : deepValue,
        fc.dictionary(fields.length ? fc.constantFrom(...fields) : hostileString, hostileValue, { maxKeys: 5 }),
      );
    };
    await fc.assert(
      fc.asyncProperty(
        command.chain((cmd) => payload(cmd).map((p) => ({ cmd, p }))),
        async ({ cmd, p }) => {
          let sent = p;
          if (!READS.has(cmd) && reachesHandler(cmd, sent)) sent = [p];
          fc.pre(READS.has(cmd) || !reachesHandler(cmd, sent));
          const reached = reachesHandler(cmd, sent);
          const a = await host.core.dispatch(cmd, sent);
          checkAnswer(cmd, a as Answer, reached);
        },
      ),
      { numRuns: 150 },
    );
    expect(await host.core.dispatch('settings.get', {})).toMatchObject({ ok: true });
  }, 50_000);
});
