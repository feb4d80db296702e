// Shared by the property-based suites: the seed, the run budget, and hostile values.
import fc from 'fast-check';

/**
 * Sets fast-check's seed for this file (FC_SEED when set, so a failure replays exactly; a new one
 * otherwise) and prints it at the start; fast-check prints the seed and the path of a failing
 * case too. Each property of the file then makes `numRuns` runs, cut short (and
 * still passing) after `timeMs` per property, so a slow or loaded machine stays well inside the test's timeout.
 */
export function fuzzRuns(file: string, o: { numRuns: number; timeMs: number }): number {
  const given = process.env.FC_SEED;
  const seed =
    given !== undefined && given.trim() !== ''
      ? Number(given)
      : (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${JSON.stringify(given)}`);
  fc.configureGlobal({ seed, numRuns: o.numRuns, interruptAfterTimeLimit: o.timeMs });
  console.log(`[fuzz] ${file}: seed ${seed} (replay with FC_SEED=${seed} npx vitest run ${file})`);
  return seed;
}

/** Nesting far beyond what any limit allows: as text, since JSON.stringify of it would overflow this test's own stack. */
export const deepText = (levels: number, open = '[', close = ']', leaf = '0'): string =>
  open === '{'
    ? `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`
    : `${open.repeat(levels)}${leaf}${close.repeat(levels)}`;

/** Strings a hostile client would send: NUL bytes, lone surrogates, control and bidi characters, paths that climb, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom(
      '\u0000',
      '\ud800',
      '\udfff',
      '\u202e',
      '\u2028',
      '\x1b',
      '\r',
      '\n',
      '"',
      '\\',
      '%00',
      '%2e%2e%2f',
      '../',
      '..\\',
      '/',
    ),
  }),
  fc.constantFrom(
    '',
    '\u0000',
    '..',
    '../../../../etc/passwd',
    '/etc/passwd',
    'C:\\Windows\\win.ini',
    '__proto__',
    'constructor',
    'prototype',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    'NaN',
    '1e309',
    '-0',
  ),
  fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
  fc.tuple(fc.string(), fc.string()).map(([a, b]) => `${a}\u0000${b}`),
);

/** A JSON-able value of any shape (fast-check's `anything`, its strings hostile too). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    maxDepth: 6,
    maxKeys: 8,
    withNullPrototype: true,
    withObjectString: true,
    withBoxedValues: true,
    withSparseArray: true,
    key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf')),
    values: [hostileString, fc.double(), fc.integer(), fc.boolean(), fc.constant(null)],
  }),
  fc.object({ maxDepth: 4, maxKeys: 6 }),
  fc.letrec<{ tree: unknown; node: unknown; leaf: unknown }>((tie) => ({
    tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('node')),
    node: fc.oneof(fc.array(tie('tree'), { maxLength: 4 }), fc.dictionary(hostileString, tie('tree'), { maxKeys: 4 })),
    leaf: fc.oneof(
      hostileString,
      fc.double(),
      fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
      fc.boolean(),
      fc.constant(null),
    ),
  })).tree,
  hostileString,
);
