// Without zod: the LoRA screen lists the kinds without building the contract's schemas (loras.ts
// re-exports them).

/** What a LoRA is trained as: the service's two training operations (`/v1/ai/loras/styles`, `/characters`). */
export const LORA_KINDS = ['style', 'character'] as const;
export type LoraKind = (typeof LORA_KINDS)[number];
