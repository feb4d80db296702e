import { expect, it } from 'vitest';
import { draftOf, emptyDraft, sinkDraftProblems, sinkFromDraft, sinkSchema } from '../../shared/audit-sinks.ts';

const none = { typed: '', stored: false };

it('names each wrong field of a sink draft with its own reason', () => {
  const d = { ...emptyDraft('splunk-hec'), id: 'Splunk!', url: 'http://splunk.example.com', index: 'Main' };
  expect(sinkDraftProblems(d, none)).toEqual({
    id: 'must be 1 to 40 lowercase letters, digits or -, starting with a letter or digit',
    url: 'must be https:// (or http:// on 127.0.0.1)',
    index: 'must be a Splunk index name (lowercase letters, digits, _ -)',
    secret: 'must be the HEC token the collector gave (it is kept in the keychain)',
  });
  expect(sinkDraftProblems({ ...emptyDraft('file'), id: 'f', folder: 'relative/dir' }, none)).toEqual({
    folder: 'must be a full path',
  });
  expect(sinkDraftProblems({ ...emptyDraft('opensearch'), id: 'os', url: 'not a url' }, none)).toEqual({
    url: 'must be a URL',
  });
  // Adding, a name another sink has is refused; a stored token counts as given.
  const ok = { ...emptyDraft('splunk-hec'), id: 'hec', url: 'https://splunk.example.com:8088' };
  expect(sinkDraftProblems(ok, { typed: '', stored: true }, ['hec'])).toEqual({
    id: "must differ from the other sinks' (hec is taken)",
  });
  expect(sinkDraftProblems(ok, { typed: 't', stored: false })).toEqual({});
});

it('round-trips a stored sink through a draft, leaving empty optional fields out', () => {
  const stored = sinkSchema.parse({ kind: 'opensearch', id: 'os', url: 'https://search.example.com:9200' });
  expect(sinkSchema.parse(sinkFromDraft(draftOf(stored)))).toEqual(stored);
  expect(sinkFromDraft({ ...emptyDraft('splunk-hec'), id: ' hec ', url: 'https://s', host: '  ' })).toEqual({
    kind: 'splunk-hec',
    enabled: true,
    id: 'hec',
    url: 'https://s',
  });
});
