/** An http URL on this machine: 127.0.0.1, localhost or [::1], any port. The Sandbox and test servers live there. */
const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?([/?#]|$)/i;

export const isLoopbackUrl = (value: string): boolean => LOOPBACK_HTTP.test(value);
