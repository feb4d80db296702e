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
 * An answer's JSON text with each of `secrets` replaced before it is parsed, so every string and name
 * of it, however deep, is clean: a 2xx body may echo the key too (a failed task's error, a result
 * URL). Only the secrets themselves (result URLs carry key-shaped signatures); the marker holds no
 * quote or backslash, so the text stays the JSON it was, and no depth of nesting costs a stack.
 */
export function redactJsonText(text: string, secrets: readonly string[]): string {
  return replaceSecrets(text, usable(secrets));
}
