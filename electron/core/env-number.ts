/** The environment's `name` as a whole number above 0 (the MEDIADESK_* knobs tests turn), or undefined. */
export function wholeNumberFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const n = Number(env[name]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
