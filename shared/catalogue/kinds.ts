/** The media a file input or a result is: an image, a video or audio. */
export type MediaKind = 'image' | 'video' | 'audio';

/** What a tool's finished task holds: files of one medium, or text (a prompt described from an image). */
export const RESULT_KINDS = ['image', 'video', 'audio', 'text'] as const;
export type ResultKind = (typeof RESULT_KINDS)[number];

/** The screen a tool is offered on: the Studio (image and prompt tools), the Video builder, Music. */
export const TOOL_GROUPS = ['image', 'prompt', 'video', 'audio'] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];
