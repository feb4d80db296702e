import { describe, expect, it } from 'vitest';
import { appInputProblems } from '../../shared/validation/app-inputs.ts';
import { appDefinitionSchema } from '../../shared/contract/team.ts';

const jingle = appDefinitionSchema.parse({
  id: 'jM4nX8sc',
  name: 'Jingle maker',
  description: '',
  output: 'audio',
  cost: 6,
  inputs: [{ id: 'brief', type: 'text', label: 'Brief', required: true, maxLength: 10 }],
});

describe("a workflow app's text inputs", () => {
  it('are counted in characters (code points), as the Sandbox and the server count them, not UTF-16 units', () => {
    expect(appInputProblems(jingle, { brief: '🎵'.repeat(10) })).toEqual([]);
    expect(appInputProblems(jingle, { brief: '𠀀'.repeat(10) })).toEqual([]);
    expect(appInputProblems(jingle, { brief: '🎵'.repeat(11) })).toEqual([
      { field: 'brief', reason: 'must be at most 10 characters' },
    ]);
    expect(appInputProblems(jingle, { brief: 'a'.repeat(11) })).toEqual([
      { field: 'brief', reason: 'must be at most 10 characters' },
    ]);
  });
});
