import type { Lora } from '../../../shared/contract/index.ts';
import { call } from './bridge.ts';

export type LoraSlot = 'style' | 'character';

/**
 * The slot of the generator's `styling` a LoRA of this type fills. The request takes styles by
 * name and characters by id (api-notes), nothing else: a product LoRA has no slot, and putting its
 * id among the characters would apply it as a character.
 */
export function slotOf(type: string): LoraSlot | null {
  return type === 'style' || type === 'character' ? type : null;
}

/**
 * The LoRA catalogue, shared so the generator's form can name a character it only knows by id
 * (the request carries the id; "run again" brings back nothing else).
 */
class LoraCatalogue {
  list = $state<Lora[]>([]);
  private pending: Promise<Lora[]> | null = null;

  /** Fetched once unless `fresh` (the gallery refetches on each visit: custom LoRAs come and go). */
  load(fresh = false): Promise<Lora[]> {
    if (!this.pending || fresh) {
      const p: Promise<Lora[]> = call('loras.list', {}).then(
        (r) => (this.list = r.loras),
        (e: unknown) => {
          // A failed fetch is not remembered: the next caller tries again.
          if (this.pending === p) this.pending = null;
          throw e;
        },
      );
      this.pending = p;
    }
    return this.pending;
  }

  nameOf(id: string | number): string | undefined {
    return this.list.find((l) => String(l.id) === String(id))?.name;
  }
}

export const loraCatalogue = new LoraCatalogue();
