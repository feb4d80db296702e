/**
 * How a browser tab tells the MediaDesk web host from another program that took its port: before
 * it sends its token anywhere, it asks `HOST_PROOF_PATH` with a fresh nonce, and only a program
 * holding the same token can answer with the nonce's HMAC-SHA-256 under it. The token never
 * leaves the tab for that. WebCrypto, so the host (Node) and the tab compute it the same way.
 */
export const HOST_PROOF_PATH = '/hello';
/** What the host says it is, beside the proof: a host with another token (--new-token) says so too. */
export const HOST_APP = 'MediaDesk';
export const NONCE_PATTERN = /^[0-9a-f]{32,128}$/;

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

export const newNonce = () => hex(crypto.getRandomValues(new Uint8Array(16)));

export async function hostProof(token: string, nonce: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(token), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return hex(new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(`mediadesk-host:${nonce}`))));
}
