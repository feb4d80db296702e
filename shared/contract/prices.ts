import { z } from 'zod';
import { findTool } from '../catalogue/index.ts';
import { command, empty } from './define.ts';

const priceToolSchema = z
  .string()
  .min(1)
  .refine((t) => findTool(t) !== undefined, 'must be a tool id (mediadesk prices lists them)');

export const priceRowSchema = z.object({
  tool: z.string(),
  title: z.string(),
  /** The price table's credits per create at `unit` (null: the service publishes none in credits). */
  published: z.number().nullable(),
  /** The user's own credits per create at `unit`, over the published; null when not set. */
  own: z.number().nullable(),
  /** What the estimate uses: own, else published, else null (cost unknown before Start). */
  effective: z.number().nullable(),
  unit: z.string(),
  /** How it scales with the request, in words ("scale_factor: output area"), empty when it does not. */
  scales: z.array(z.string()),
  source: z.string(),
  checked: z.string(),
  note: z.string().nullable(),
});
export type PriceRow = z.infer<typeof priceRowSchema>;

export const pricesListSchema = z.object({ prices: z.array(priceRowSchema) });
export type PricesList = z.infer<typeof pricesListSchema>;

export const pricesCommands = {
  'prices.list': command(
    empty,
    pricesListSchema,
    "The price table per tool: the service's published price with its source and date, the user's own, and the one in use.",
  ),
  'prices.set': command(
    z
      .object({
        tool: priceToolSchema,
        credits: z
          .number({ error: 'must be a number of credits' })
          .min(0, 'must be 0 or more')
          .max(1_000_000, 'must be at most 1,000,000'),
      })
      .strict(),
    pricesListSchema,
    'Sets your own credits per create of a tool (at the unit the table names), over the published price.',
  ),
  'prices.reset': command(
    z.object({ tool: priceToolSchema.optional() }).strict(),
    pricesListSchema,
    'Drops your own price of a tool (every tool when none is named): the published price applies again.',
  ),
};
