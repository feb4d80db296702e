/**
 * Model families: tools that are variants of one model (its fast variant, image beside text input).
 * A family shares the spec's reference-media limits (shared/validation/limits.ts) and one tab of the
 * Video builder; a tool names its family in its catalogue entry.
 */
export const FAMILIES = ['2x', '25', '1x', 'lite', 'kling', 'wan', 'lip-sync', 'upscaler', 'image50-edit'] as const;
export type Family = (typeof FAMILIES)[number];

/** How messages name a family ("the video 2.x family takes…"), and the Video builder's title for it. */
export const FAMILY_NAMES: Record<Family, { name: string; title: string }> = {
  '2x': { name: 'video 2.x', title: '2.x generation' },
  '25': { name: 'video 2.5', title: '2.5 multi-shot' },
  '1x': { name: 'video 1.x', title: 'Image to video, end frame' },
  lite: { name: 'lite video', title: 'Lite' },
  kling: { name: 'Kling', title: 'Kling' },
  wan: { name: 'WAN', title: 'WAN' },
  'lip-sync': { name: 'lip-sync', title: 'Lip-sync' },
  upscaler: { name: 'video upscaler', title: 'Upscaler' },
  'image50-edit': { name: '5.0 image edit', title: '5.0 image edit' },
};

export const isFamily = (s: string): s is Family => (FAMILIES as readonly string[]).includes(s);
