/**
 * Key-shaped runs: 24 or more letters and digits, both present. A server that echoes the key (or
 * another secret) in an error must not put it in the queue, a log, stdout or the renderer.
 */
const KEY_SHAPED = /(?<![A-Za-z0-9])(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{24,}(?![A-Za-z0-9])/g;

/** Shorter strings are too common in ordinary text to blank out. */
const usable = (secrets: readonly string[]) => secrets.filter((s) => s.length >= 4);

const replaceSecrets = (text: string, secrets: readonly string[]) =>
  secrets.reduce((out, s) => (out.includes(s) ? out.split(s).join('[redacted key]') : out), text);

/** `text` with each of `secrets` and anything shaped like a key replaced by a marker. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  return replaceSecrets(text, usable(secrets)).replace(KEY_SHAPED, '[redacted]');
}

/**
 * A parsed answer of the service with each of `secrets` replaced in every string, however deep: a
 * 2xx body may echo the key too (a failed task's error, a result URL). Only the secrets themselves:
 * key-shaped runs are left alone here, since result URLs carry signatures of that shape.
 */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
  const used = usable(secrets);
  if (!used.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return replaceSecrets(v, used);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [replaceSecrets(k, used), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
