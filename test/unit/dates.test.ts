import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDate, formatDateTime, formatTime } from '../../shared/dates.ts';

const ROOT = join(import.meta.dirname, '../..');

describe('the one date and time format (shared/dates.ts)', () => {
  const at = Date.parse('2026-12-05T09:13:42Z');
  const intl = (o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(undefined, o).format(at);

  it("writes a date, a time and both in the user's locale: a medium date and a short time", () => {
    expect(formatDate(at, { utc: true })).toBe(intl({ dateStyle: 'medium', timeZone: 'UTC' }));
    expect(formatTime(at)).toBe(intl({ timeStyle: 'short' }));
    expect(formatDateTime(at)).toBe(intl({ dateStyle: 'medium', timeStyle: 'short' }));
    // The same instant from an ISO text, a number or a Date reads the same.
    expect(formatDateTime(new Date(at))).toBe(formatDateTime('2026-12-05T09:13:42Z'));
    expect(formatDateTime(at, { utc: true })).toBe(intl({ dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }));
  });

  it('in en-US: "Dec 5, 2026", "9:13 AM" (the process locale of the tests)', () => {
    if (new Intl.DateTimeFormat().resolvedOptions().locale !== 'en-US') return;
    expect(formatDate(at, { utc: true })).toBe('Dec 5, 2026');
    expect(formatTime(at, { utc: true })).toBe('9:13 AM');
    expect(formatDateTime(at, { utc: true })).toBe('Dec 5, 2026, 9:13 AM');
  });

  it('a calendar day is that day wherever the viewer is; nothing, or text that is not a time, is shown as it came', () => {
    expect(formatDate('2026-12-05')).toBe(formatDate(Date.parse('2026-12-05T00:00:00Z'), { utc: true }));
    expect(formatDate(null)).toBe('');
    expect(formatDateTime(undefined)).toBe('');
    expect(formatDateTime('')).toBe('');
    expect(formatDateTime('soon')).toBe('soon');
  });
});

/** Every file of a folder, as the scan reads it. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return files(join(dir, e.name));
    return /\.(ts|svelte)$/.test(e.name) ? [join(dir, e.name)] : [];
  });
}

/** Ways of writing a date or time by hand; shared/dates.ts is the one place that may. */
const AD_HOC: [RegExp, string][] = [
  [/toLocale(Date|Time)String\(/, 'toLocaleDateString/toLocaleTimeString'],
  [/Date\([^)]*\)\)?\.toLocaleString\(/, 'a Date written with toLocaleString'],
  [/Intl\.DateTimeFormat|dateStyle|timeStyle/, 'Intl.DateTimeFormat options'],
  [/get(UTC)?(Hours|Minutes|Date|Month|FullYear)\(\)/, 'a date assembled from its parts'],
  // An ISO instant cut into its day and clock time for people to read (file names and input values aside).
  [/(?<!\$)\{[^}]*\.slice\(0, ?10\)\}|\.slice\(11, ?19\)|\.slice\(11, ?16\)\}/, 'an ISO text cut for display'],
  [/'Jan', ?'Feb'|\bMONTHS\b/, 'month names written by hand'],
];

describe('no date or time is formatted by hand in the renderer or in shared/', () => {
  it.each(['renderer/src', 'shared'])('%s uses shared/dates.ts for every date and time it shows', (dir) => {
    const found: string[] = [];
    for (const file of files(join(ROOT, dir)).filter((f) => !f.endsWith(join('shared', 'dates.ts'))))
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [re, what] of AD_HOC)
            if (re.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${what}: ${line.trim()}`);
        });
    expect(found).toEqual([]);
  });
});
