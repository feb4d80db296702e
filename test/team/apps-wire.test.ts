import { describe, expect, it } from 'vitest';
import { plannedOutputs } from '../../electron/core/apps/store.ts';
import { parseAppDefinition, parseAppList, parseRun } from '../../electron/core/apps/wire.ts';

// The app endpoints' bodies as the service's official description shows them (small examples in
// its shapes, written here), and the earlier shapes the reader still takes.

const LIST = {
  data: [
    {
      sqid: 'uqzQLDr2Aw',
      name: 'Sketch to Realism',
      tool_metadata: {
        icon: 'workflow',
        description_key: null,
        translation_key: null,
        category: 'general',
        sort_order: 999,
        total_cost: 5,
      },
    },
    {
      sqid: 'n0LYQDBl58',
      name: 'Product Photoshoot',
      tool_metadata: {
        icon: 'workflow',
        description_key: null,
        translation_key: null,
        category: 'general',
        sort_order: 999,
      },
    },
  ],
};

const DEFINITION = {
  data: {
    sqid: 'uqzQLDr2Aw',
    name: 'Sketch to Realism',
    inputs: [
      {
        id: 'input-a1b2c3d4-e5f6-7890-abcd-ef1234567890-1',
        key: 'image',
        type: 'creation',
        label: 'Image',
        config: { mediaType: 'image' },
        nodeId: 'a1b2c3d4-e5f6-7890-abcd-ef1234567890',
        default: null,
        required: true,
        presentation: null,
      },
      {
        id: 'input-b2c3d4e5-f6a7-8901-bcde-f12345678901-1',
        key: 'prompt',
        type: 'text',
        label: 'Prompt',
        config: { max_length: 500 },
        default: null,
        required: false,
      },
      {
        id: 'input-c3d4e5f6-a7b8-9012-cdef-123456789012-1',
        key: 'strength',
        type: 'number',
        label: 'Strength',
        config: { min: 0, max: 100 },
        default: 50,
        required: false,
      },
      {
        id: 'input-d4e5f6a7-b8c9-0123-def0-234567890123-1',
        key: 'style',
        type: 'select',
        label: 'Style',
        config: { options: ['photo', 'cinematic'] },
        default: 'photo',
        required: false,
      },
    ],
    tool_metadata: {
      icon: 'workflow',
      description_key: null,
      translation_key: null,
      category: 'general',
      sort_order: 999,
      total_cost: 5,
    },
  },
};

const RESULT_ITEM = {
  id: 'abc123',
  url: 'https://cdn.example/private/production/1234567890/render.png?token=exp_1~hmac_abc',
  tool: 'text-to-image',
  duration: null,
  width: 1024,
  height: 1024,
  created_at: '2026-02-25T12:02:00+00:00',
};

const run = (over: Record<string, unknown>) => ({
  data: {
    run_id: 'omps2OH829',
    status: 'running',
    app_id: 'uqzQLDr2Aw',
    started_at: '2026-02-25T12:00:00+00:00',
    completed_at: null,
    error_message: null,
    result: null,
    ...over,
  },
});

describe('the official app shapes', () => {
  it('parseAppList reads apps by `sqid`, with their cost from tool_metadata (none when it has no total_cost)', () => {
    expect(parseAppList(LIST)).toEqual([
      { id: 'uqzQLDr2Aw', name: 'Sketch to Realism', description: '', output: null, cost: 5 },
      { id: 'n0LYQDBl58', name: 'Product Photoshoot', description: '', output: null, cost: null },
    ]);
    // Unwrapped too.
    expect(parseAppList(LIST.data).map((a) => a.id)).toEqual(['uqzQLDr2Aw', 'n0LYQDBl58']);
  });

  it('parseAppDefinition keys inputs by `id` (not `key`) and reads options and bounds from `config`', () => {
    const def = parseAppDefinition(DEFINITION);
    expect(def).toEqual({
      id: 'uqzQLDr2Aw',
      name: 'Sketch to Realism',
      description: '',
      output: null,
      cost: 5,
      inputs: [
        { id: 'input-a1b2c3d4-e5f6-7890-abcd-ef1234567890-1', type: 'creation', label: 'Image', required: true },
        {
          id: 'input-b2c3d4e5-f6a7-8901-bcde-f12345678901-1',
          type: 'text',
          label: 'Prompt',
          required: false,
          maxLength: 500,
        },
        {
          id: 'input-c3d4e5f6-a7b8-9012-cdef-123456789012-1',
          type: 'number',
          label: 'Strength',
          required: false,
          min: 0,
          max: 100,
          default: 50,
        },
        {
          id: 'input-d4e5f6a7-b8c9-0123-def0-234567890123-1',
          type: 'select',
          label: 'Style',
          required: false,
          options: ['photo', 'cinematic'],
          default: 'photo',
        },
      ],
    });
    expect(parseAppDefinition(DEFINITION.data)).toEqual(def);
  });

  it('parseRun reads the 202 acknowledgement, wrapped or not', () => {
    expect(parseRun({ status: 'running', workflow_run_identifier: 'vCrK3Aa47y' })).toEqual({
      runId: 'vCrK3Aa47y',
      status: 'running',
      results: [],
      error: null,
    });
    expect(parseRun({ data: { status: 'pending', workflow_run_identifier: 'vCrK3Aa47y' } })).toMatchObject({
      runId: 'vCrK3Aa47y',
      status: 'pending',
    });
  });

  it("parseRun reads a completed run's results from data.result, each with the kind of its array", () => {
    const video = {
      ...RESULT_ITEM,
      id: 'v1',
      url: 'https://cdn.example/v/clip.mp4?t=1',
      tool: 'image-to-video',
      duration: 5,
      width: 1280,
      height: 720,
    };
    const audio = {
      ...RESULT_ITEM,
      id: 'a1',
      url: 'https://cdn.example/a/track',
      tool: 'music-generation',
      duration: 30,
      width: null,
      height: null,
    };
    expect(
      parseRun(
        run({
          status: 'completed',
          completed_at: '2026-02-25T12:02:00+00:00',
          result: { images: [RESULT_ITEM], videos: [video], audios: [audio] },
        }),
      ),
    ).toEqual({
      runId: 'omps2OH829',
      status: 'completed',
      error: null,
      results: [
        { url: RESULT_ITEM.url, kind: 'image' },
        { url: video.url, kind: 'video' },
        { url: audio.url, kind: 'audio' },
      ],
    });
    expect(
      parseRun(
        run({
          status: 'completed_with_errors',
          error_message: 'one node failed',
          result: { images: [RESULT_ITEM], videos: [], audios: [] },
        }),
      ),
    ).toEqual({
      runId: 'omps2OH829',
      status: 'completed_with_errors',
      error: 'one node failed',
      results: [{ url: RESULT_ITEM.url, kind: 'image' }],
    });
  });

  it('parseRun reads a running run (result null) and a failed one (error_message)', () => {
    expect(parseRun(run({}))).toEqual({ runId: 'omps2OH829', status: 'running', results: [], error: null });
    const failed = run({
      status: 'failed',
      completed_at: '2026-02-25T12:01:30+00:00',
      error_message: "Node 'image-upscaler' failed: input image exceeds maximum resolution",
    });
    expect(parseRun(failed)).toEqual({
      runId: 'omps2OH829',
      status: 'failed',
      results: [],
      error: "Node 'image-upscaler' failed: input image exceeds maximum resolution",
    });
  });
});

describe('where results go', () => {
  it('each result file takes the extension of its kind, whatever the app was thought to make and with no extension in its URL', () => {
    const { results } = parseRun(
      run({
        status: 'completed',
        result: {
          images: [{ ...RESULT_ITEM, url: 'https://cdn.example/i/1' }],
          videos: [{ ...RESULT_ITEM, url: 'https://cdn.example/v/2' }],
          audios: [{ ...RESULT_ITEM, url: 'https://cdn.example/a/3' }],
        },
      }),
    );
    const run1 = { id: 'local-id', appName: 'Sketch to Realism', outDir: '/out', outputKind: 'image', results };
    const names = (inputs: Record<string, unknown>, sources: Record<string, string> = {}) =>
      plannedOutputs({ ...run1, inputs, sources }).map((p) => p.replace(/^.*[\\/]/, ''));
    // Named by the one naming rule of results: with no input, after the app.
    expect(names({})).toEqual(['sketch-to-realism.png', 'sketch-to-realism_2.mp4', 'sketch-to-realism_3.mp3']);
    // After the first words of a text input, then the app, as a tool's results.
    expect(names({ brief: 'a pencil sketch of a red barn at noon', n: 2 })[0]).toBe(
      'a-pencil-sketch-of-a-red_sketch-to-realism.png',
    );
    // After the local image a creation input was read from (its value is the image's bytes).
    expect(names({ sketch: 'data:image/png;base64,AAAA', brief: 'barn' }, { sketch: '/in/barn sketch.png' })[0]).toBe(
      'barn sketch_sketch-to-realism.png',
    );
  });
});

describe('earlier shapes, still read', () => {
  it('apps and inputs named `id`, limits at the top level of an input', () => {
    const def = parseAppDefinition({
      data: {
        id: 'old1',
        name: 'Old',
        output: 'video',
        inputs: [
          {
            id: 'mood',
            type: 'select',
            label: 'Mood',
            required: false,
            options: [{ value: 'calm' }, 'epic'],
            default: 'calm',
          },
          { id: 'n', type: 'number', label: 'N', min: 1, max: 3, required: true },
        ],
      },
    });
    expect(def).toMatchObject({
      id: 'old1',
      output: 'video',
      cost: null,
      inputs: [
        { id: 'mood', options: ['calm', 'epic'] },
        { id: 'n', min: 1, max: 3 },
      ],
    });
  });

  it('run results as one list of URLs or {url, content_type} items', () => {
    expect(
      parseRun({
        workflow_run_identifier: 'r1',
        status: 'COMPLETED',
        results: ['https://x/1.png', { url: 'https://x/2', content_type: 'video/mp4' }],
      }),
    ).toEqual({
      runId: 'r1',
      status: 'completed',
      error: null,
      results: [{ url: 'https://x/1.png' }, { url: 'https://x/2', contentType: 'video/mp4' }],
    });
  });
});
