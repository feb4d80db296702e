import { z } from 'zod';
import { command, invalidParamSchema } from './define.ts';
import { LORA_KINDS } from './lora-kinds.ts';

export * from './lora-kinds.ts';

/** A training's states: the queue's, with `training` for the service's task under way. */
export const TRAINING_STATES = ['queued', 'submitting', 'training', 'done', 'failed', 'needs_attention'] as const;

/**
 * A training asked for: its fields as the service names them (checked against the reference's
 * operation for `kind`), and the images as local files or folders of them, uploaded through the
 * service's upload flow before the create is sent.
 */
export const loraTrainRequestSchema = z
  .object({
    kind: z.enum(LORA_KINDS),
    name: z.string(),
    description: z.string().optional(),
    quality: z.string().optional(),
    gender: z.string().optional(),
    inputs: z.array(z.string().min(1)).max(1000),
  })
  .strict();
export type LoraTrainRequest = z.input<typeof loraTrainRequestSchema>;

/** A field of the training's request as the reference describes it, for the form. */
export const trainingFieldSchema = z.object({
  name: z.string(),
  required: z.boolean(),
  options: z.array(z.string()).nullable(),
  pattern: z.string().nullable(),
  help: z.string(),
});

export const trainCheckSchema = z.object({
  ok: z.boolean(),
  /** The images that would be sent, in order. */
  images: z.array(z.string()),
  /** Files given or found in a folder that are not sent, each with why. */
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  /** Every problem of the request, by the service's field names (`images` for their count). */
  problems: z.array(invalidParamSchema),
  fields: z.array(trainingFieldSchema),
  limits: z.object({ min: z.number(), max: z.number() }),
  /** Credits a training costs, or null with why none is known. */
  price: z.object({ credits: z.number().nullable(), note: z.string() }),
});
export type TrainCheck = z.infer<typeof trainCheckSchema>;

export const loraTrainingSchema = z.object({
  id: z.string(),
  kind: z.enum(LORA_KINDS),
  name: z.string(),
  state: z.enum(TRAINING_STATES),
  images: z.number(),
  taskId: z.string().nullable(),
  /** The new LoRA's id in the catalogue, once listed. */
  loraId: z.number().nullable(),
  /** `training.status` as the catalogue last said it. */
  trainingStatus: z.string().nullable(),
  error: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type LoraTraining = z.infer<typeof loraTrainingSchema>;

export const lorasCommands = {
  'loras.trainCheck': command(
    loraTrainRequestSchema,
    trainCheckSchema,
    "Check a LoRA training (fields against the service's description, the images read) and say its price; nothing is sent.",
  ),
  'loras.train': command(
    loraTrainRequestSchema,
    z.object({ training: loraTrainingSchema }),
    'Queue a LoRA training: refused with every problem before anything is uploaded or paid for.',
  ),
  'loras.trainings': command(
    z.object({ limit: z.number().int().min(1).max(500).optional() }).strict(),
    z.object({ trainings: z.array(loraTrainingSchema) }),
    'The LoRA trainings, newest first.',
  ),
};

export const lorasEvents = {
  'loras.changed': z.object({ trainings: z.array(loraTrainingSchema) }),
};
