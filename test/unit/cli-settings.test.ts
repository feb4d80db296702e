// `mediadesk settings` as a script uses it: a real process over a real data folder, exit codes, stderr.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli.ts';

const home = mkdtempSync(join(tmpdir(), 'cli-settings-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const cli = (args: string[]) => runCli(['settings', ...args], { env: { MEDIADESK_HOME: home } });
/** `mediadesk settings` over its own data folder, whose settings.json holds `stored` (as if edited by hand). */
function storedSettings(stored: unknown): (args: string[]) => ReturnType<typeof runCli> {
  const own = mkdtempSync(join(home, 'stored-'));
  writeFileSync(join(own, 'settings.json'), JSON.stringify(stored));
  return (args) => runCli(['settings', ...args], { env: { MEDIADESK_HOME: own } });
}
const KNOWN =
  '(known: backend, baseUrl, keyHeader, sandboxKey, outputDir, namingTemplate, concurrency, perToolConcurrency, theme, slugs, planTier, autoUpdate, keepMetadata, writeProvenance, provenanceSidecar, notifications, osContextMenu, osSendTo, osQuickAction, osLinks, auditSinks, forwardAfterAuditSync, teamServer, favouriteTools)';

describe('mediadesk settings', () => {
  it('a setting named twice in one set is refused (exit 2) and nothing is saved', async () => {
    const r = await cli(['set', 'concurrency=6', 'theme=dark', 'theme=light']);
    expect([r.code, r.out, r.err]).toEqual([2, '', 'mediadesk settings: theme is given more than once\n']);
    const after = await cli(['get']);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.out)).toMatchObject({ theme: 'system', concurrency: 4 });
  });

  it('switches what results carry: metadata and provenance on by default, the record beside them off', async () => {
    const own = storedSettings({});
    expect(JSON.parse((await own(['get'])).out)).toMatchObject({
      keepMetadata: true,
      writeProvenance: true,
      provenanceSidecar: false,
    });
    expect(await own(['set', 'keepMetadata=false', 'provenanceSidecar=true'])).toEqual({
      code: 0,
      out: 'saved keepMetadata, provenanceSidecar\n',
      err: '',
    });
    expect((await own(['get', 'keepMetadata'])).out).toBe('false\n');
    const bad = await own(['set', 'writeProvenance=yes']);
    expect([bad.code, bad.err]).toEqual([
      2,
      'mediadesk settings: settings not saved: writeProvenance must be true or false\n',
    ]);
  });

  it('a name with control characters is shown escaped on one line, not raw', async () => {
    const cases: [string[], string][] = [
      [['set', 'the\nme=dark'], `unknown setting "the\\nme" ${KNOWN}`],
      [['get', 'a\u001b[31mb'], `unknown setting "a\\x1b[31mb" ${KNOWN}`],
      [['set', 'theme\tdark'], 'expected NAME=VALUE, got "theme\\tdark"'],
      [['set', 'perToolConcurrency={"a":\n'], '"{"a":\\n" looks like JSON but does not parse'],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect([r.code, r.out, r.err], JSON.stringify(args)).toEqual([2, '', `mediadesk settings: ${message}\n`]);
    }
  });

  // Values edited into settings.json by hand: `settings get NAME` prints each escaped on its line, and the
  // listing stays JSON that parses back to them, with none of them raw; other text stays as it is.
  it.each([
    {
      what: 'control characters (ESC, CR, newline, DEL) as \\x1b',
      // Not in namingTemplate: a template with a control character is refused (Windows allows none in a file name).
      stored: { outputDir: '/tmp/shoot\n\u001b[2Jday\r1\u007f', perToolConcurrency: { 'im\u007fage': 2 } },
      printed: { outputDir: '/tmp/shoot\\n\\x1b[2Jday\\r1\\x7f', perToolConcurrency: '{"im\\u007fage":2}' },
      raw: /[\u0000-\u001f\u007f]/,
    },
    {
      what: 'C1 controls (U+009B, the 8-bit CSI; U+0085, NEL) as \\u009b; é, emoji and CJK as they are',
      stored: { outputDir: '/tmp/é 🎬 漢字\u009b2J\u0085day', perToolConcurrency: { 'im\u009bage': 2 } },
      printed: { outputDir: '/tmp/é 🎬 漢字\\u009b2J\\u0085day', perToolConcurrency: '{"im\\u009bage":2}' },
      raw: /[\u0080-\u009f]/,
      kept: 'é 🎬 漢字',
    },
    {
      what: 'line separators (U+2028, U+2029) and bidi controls (U+202E, U+2066) as \\u2028; RTL letters as they are',
      stored: {
        outputDir: '/tmp/shoot\u2028day\u2029two \u202Egnp.exe שלום',
        namingTemplate: '{name}\u2066.{ext}',
        perToolConcurrency: { 'im\u2028age': 2 },
      },
      printed: {
        outputDir: '/tmp/shoot\\u2028day\\u2029two \\u202egnp.exe שלום',
        namingTemplate: '{name}\\u2066.{ext}',
        perToolConcurrency: '{"im\\u2028age":2}',
      },
      raw: /[\u2028\u2029\u202e\u2066]/,
      kept: 'two \\u202egnp.exe שלום',
    },
  ])(
    'a stored value with $what is printed escaped; the listing stays valid JSON',
    async ({ stored, printed, raw, kept }) => {
      const run = storedSettings(stored);
      for (const [name, out] of Object.entries(printed))
        expect(await run(['get', name]), name).toEqual({ code: 0, out: `${out}\n`, err: '' });
      const all = await run(['get']);
      expect([all.code, all.err]).toEqual([0, '']);
      // Only the listing's own line breaks.
      expect(all.out.replace(/\n/g, '')).not.toMatch(raw);
      if (kept) expect(all.out).toContain(kept);
      expect(JSON.parse(all.out)).toMatchObject(stored);
    },
  );

  it('an unreadable settings file in a folder whose name holds control characters: the warning names it escaped, on one line', async () => {
    const own = mkdtempSync(join(tmpdir(), 'cli-settings-\u001b[31m\n-'));
    writeFileSync(join(own, 'settings.json'), '{"theme": "dark",');
    const got = await runCli(['settings', 'get', 'theme'], { env: { MEDIADESK_HOME: own } });
    expect([got.code, got.out]).toEqual([0, 'system\n']);
    expect(got.err).toMatch(
      /^warning: \S*cli-settings-\\x1b\[31m\\n-\S*settings\.json is not valid JSON \(.+\); these are the defaults \(the file is left as it is\)\n$/,
    );
    rmSync(own, { recursive: true, force: true });
  });

  it('an unreadable settings file: get warns and shows the defaults, set keeps the file aside and says where', async () => {
    const own = mkdtempSync(join(tmpdir(), 'cli-settings-bad-'));
    const file = join(own, 'settings.json');
    writeFileSync(file, '{"theme": "dark",');
    const run = (args: string[]) => runCli(['settings', ...args], { env: { MEDIADESK_HOME: own } });
    const got = await run(['get', 'theme']);
    expect([got.code, got.out]).toEqual([0, 'system\n']);
    expect(got.err).toMatch(
      new RegExp(
        `^warning: ${file.replace(/[.\\/]/g, '\\$&')} is not valid JSON \\(.+\\); these are the defaults \\(the file is left as it is\\)\n$`,
      ),
    );
    expect(readFileSync(file, 'utf8')).toBe('{"theme": "dark",');
    const set = await run(['set', 'concurrency=6']);
    const kept = readdirSync(own).find((n) => n.startsWith('settings.json.bad-'));
    expect([set.code, set.out, set.err]).toEqual([
      0,
      'saved concurrency\n',
      `the settings file could not be read; it is kept as ${join(own, kept!)}\n`,
    ]);
    expect(readFileSync(join(own, kept!), 'utf8')).toBe('{"theme": "dark",');
    rmSync(own, { recursive: true, force: true });
  });

  it('a stored value this build does not use: get shows the default on stdout and says on stderr which value was not used, and why', async () => {
    const own = mkdtempSync(join(tmpdir(), 'cli-settings-ignored-'));
    writeFileSync(
      join(own, 'settings.json'),
      JSON.stringify({
        concurrency: 99,
        theme: 'dark',
        perToolConcurrency: { image: 0 },
        exportFormat: { kind: 'xlsx' },
      }),
    );
    const run = (args: string[]) => runCli(['settings', ...args], { env: { MEDIADESK_HOME: own } });
    const notes = {
      concurrency: 'note: concurrency: the stored value 99 was not used (must be at most 32); the default is in use\n',
      perTool:
        'note: perToolConcurrency: the stored value {"image":0} was not used (image must be at least 1); the default is in use\n',
      newer:
        'note: exportFormat: the stored value {"kind":"xlsx"} was not used (not a setting of this version of MediaDesk, perhaps of a newer one); it is left in the file\n',
    };
    const all = await run(['get']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.out)).toMatchObject({ concurrency: 4, theme: 'dark', perToolConcurrency: {} });
    expect(all.err).toBe(notes.concurrency + notes.perTool + notes.newer);
    // One setting asked for: its own note only, the value alone on stdout.
    expect(await run(['get', 'concurrency'])).toEqual({ code: 0, out: '4\n', err: notes.concurrency });
    expect(await run(['get', 'theme'])).toEqual({ code: 0, out: 'dark\n', err: '' });
    // Saved anew, the value is used and no longer mentioned; the newer build's setting stays in the file.
    expect((await run(['set', 'concurrency=6', 'perToolConcurrency={"image":2}'])).code).toBe(0);
    const after = await run(['get']);
    expect([after.code, after.err]).toEqual([0, notes.newer]);
    expect(JSON.parse(readFileSync(join(own, 'settings.json'), 'utf8')).exportFormat).toEqual({ kind: 'xlsx' });
    rmSync(own, { recursive: true, force: true });
  });
});
