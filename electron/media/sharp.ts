import type Sharp from 'sharp';

let loading: Promise<typeof Sharp> | null = null;

/**
 * libvips is loaded on first use, not with the engine: it maps ~7 MB of code and starts its own
 * allocator arenas, and a folder batch reads image headers without it (bench/engine-throughput.ts).
 */
export const loadSharp = (): Promise<typeof Sharp> => (loading ??= import('sharp').then((m) => m.default));
