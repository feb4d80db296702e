import { z } from 'zod';
import { FAMILIES } from '../catalogue/families.ts';
import { command } from './define.ts';

const issueSchema = z.object({ rule: z.string(), message: z.string() });

const referenceReportSchema = z.object({
  source: z.string(),
  ok: z.boolean(),
  probe: z
    .object({
      container: z.string(),
      durationSec: z.number().nullable(),
      fps: z.number().nullable(),
      width: z.number().nullable(),
      height: z.number().nullable(),
      bytes: z.number(),
    })
    .nullable(),
  errors: z.array(issueSchema),
});

export const checkReportSchema = z.object({
  ok: z.boolean(),
  family: z.enum(FAMILIES),
  references: z.array(referenceReportSchema),
  /** The body's start and end frame, when given as a URL, a path or inline data: probed as reference images are. */
  frames: z.array(referenceReportSchema.extend({ field: z.string() })),
  errors: z.array(issueSchema),
  warnings: z.array(issueSchema),
});
export type CheckReportData = z.infer<typeof checkReportSchema>;

export const loraSchema = z.object({
  id: z.number(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  type: z.string(),
  preview: z.string(),
  /** The preview cached in the data folder, for desk.mediaUrl(); null when it could not be fetched. */
  previewPath: z.string().nullable(),
  training: z
    .object({ status: z.string().optional(), defaultScale: z.number().optional(), quality: z.unknown().optional() })
    .passthrough()
    .optional(),
  custom: z.boolean(),
});
export type Lora = z.infer<typeof loraSchema>;

/**
 * A source with the name messages give it: inline data (base64, a data: URI) is named by its place
 * in the request ('reference_images 2 (inline data)'), as the engine names it at Submit.
 */
const namedSourceSchema = z.object({ source: z.string().min(1), name: z.string().min(1) }).strict();

export const mediaCommands = {
  'media.check': command(
    z
      .object({
        family: z.enum(FAMILIES),
        sources: z.array(z.union([z.string().min(1), namedSourceSchema])).max(20),
        body: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    checkReportSchema,
    'Probe reference files or URLs and apply every reference rule before anything is paid for.',
  ),
  'loras.list': command(
    z.object({}).strict(),
    z.object({ loras: z.array(loraSchema) }),
    "The LoRA catalogue: defaults and the caller's own.",
  ),
};
