/**
 * Key-shaped runs: 24 or more letters and digits, both present. A server that echoes the key (or
 * another secret) in an error must not put it in the queue, a log, stdout or the renderer.
 */
const KEY_SHAPED = /(?<![A-Za-z0-9])(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{24,}(?![A-Za-z0-9])/g;

/** `text` with each of `secrets` and anything shaped like a key replaced by a marker. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted key]');
  return out.replace(KEY_SHAPED, '[redacted]');
}
