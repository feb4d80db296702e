import { describe, expect, it } from 'vitest';
import { backendLabel, keylessIdentity, waitingFor, waitingForShort } from '../../shared/contract/foundation.ts';

// Backend identities in words: what the Queue, Settings and the CLI say about work that waits.
const A = 'live https://api.example.com key 0a1b2c3d';
const B = 'live https://api.example.com key 9f8e7d6c';
const OTHER = 'live https://eu.example.com key 0a1b2c3d';

describe('backend identities', () => {
  it('are named for people: the Sandbox, or the live service at its URL with the key fingerprint', () => {
    expect(backendLabel('sandbox')).toBe('the built-in Sandbox');
    expect(backendLabel(A)).toBe('the live service at https://api.example.com (API key 0a1b2c3d)');
    expect(backendLabel('live https://api.example.com')).toBe('the live service at https://api.example.com');
  });

  it('say whether work waits for another server or for another key of the same one', () => {
    expect(waitingFor(A, A)).toBeNull();
    expect(waitingFor(null, A)).toBeNull();
    expect(waitingFor(B, A)).toBe(
      'waiting for the API key 9f8e7d6c, with which it was queued on the live service at https://api.example.com: set that key again to continue, or cancel it (the key in use is 0a1b2c3d)',
    );
    expect(waitingFor(OTHER, A)).toBe(
      'waiting for the live service at https://eu.example.com (API key 0a1b2c3d), where it was queued: switch back to it to continue, or cancel it',
    );
    expect(waitingFor('sandbox', A)).toBe(
      'waiting for the built-in Sandbox, where it was queued: switch back to it to continue, or cancel it',
    );
    expect([
      waitingForShort(B, A),
      waitingForShort(OTHER, A),
      waitingForShort('sandbox', A),
      waitingForShort(A, 'sandbox'),
    ]).toEqual(['another API key', 'the live service', 'the Sandbox', 'the live service']);
  });

  it('recorded before the key was part of them, are the same server without the key', () => {
    expect(keylessIdentity(A)).toBe('live https://api.example.com');
    expect(keylessIdentity('live https://api.example.com')).toBeNull();
    expect(keylessIdentity('sandbox')).toBeNull();
  });
});
