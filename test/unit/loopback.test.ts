import { describe, expect, it } from 'vitest';
import { isLoopbackUrl } from '../../shared/loopback.ts';
import { encodingOf, getTool, validateRequest } from '../../shared/catalogue/index.ts';
import { settingsPatchSchema } from '../../shared/settings.ts';

const LOOPBACK = [
  'http://127.0.0.1',
  'http://127.0.0.1/',
  'http://127.0.0.1:8080',
  'http://127.0.0.1:8080/inputs/a.png',
  'http://localhost:3000/',
  'http://LOCALHOST/a.png',
  'http://[::1]:8080',
  'http://[::1]/a.png?x=1',
  'http://localhost:5173#top',
];

const ELSEWHERE = [
  'https://127.0.0.1/',
  'http://127.0.0.2/',
  'http://0.0.0.0:8080/',
  'http://[::2]/',
  'http://localhost.example.com/',
  'http://localhost@example.com/',
  'http://localhost:80@example.com/',
  'http://example.com/127.0.0.1',
  'http://127.0.0.1.example.com/',
  'ftp://localhost/',
  'http://127.0.0.1:port/',
  ' http://localhost/',
  'localhost:8080',
  '',
];

describe('the one loopback test', () => {
  it.each(LOOPBACK)('%s is on this machine', (url) => expect(isLoopbackUrl(url)).toBe(true));
  it.each(ELSEWHERE)('%j is not', (url) => expect(isLoopbackUrl(url)).toBe(false));

  it('every place that asks agrees: the settings, a media field and a webhook', () => {
    const tool = getTool('change-camera');
    for (const url of LOOPBACK) {
      expect(settingsPatchSchema.safeParse({ baseUrl: url }).success, url).toBe(true);
      expect(encodingOf(url), url).toBe('url');
      expect(validateRequest(tool, { image: url, webhook_url: url }).ok, url).toBe(true);
    }
    for (const url of ['http://example.com/a.png', 'http://127.0.0.2/a.png', 'http://localhost@example.com/']) {
      expect(settingsPatchSchema.safeParse({ baseUrl: url }).success, url).toBe(false);
      expect(validateRequest(tool, { image: url }).ok, url).toBe(false);
    }
  });
});
