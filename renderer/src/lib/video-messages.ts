import type { InvalidParam } from '../../../shared/catalogue/index.ts';
import type { Ref } from './video.svelte.ts';

// The words the video builder shows on a field, from the problems it shows and its references.

const sameField = (p: InvalidParam, name: string) => p.field.split('.')[0] === name;
const withPart = (p: InvalidParam) => (p.field.includes('.') ? `${p.field}: ${p.reason}` : p.reason);

/** The messages of field `name`; one about a part of it (`shots.1.prompt`) names the part. */
export function fieldMessages(shown: InvalidParam[], name: string): string[] {
  return [...new Set(shown.filter((p) => sameField(p, name)).map(withPart))];
}

/**
 * A reference list's field messages: one about an item (`reference_images.2`) names the item by
 * its file name, and is left out when the item shows its own error already (a bad URL was named
 * twice, once as a raw path).
 */
export function referenceMessages(shown: InvalidParam[], refs: Ref[], name: string): string[] {
  const items = refs.filter((r) => r.field === name);
  return [
    ...new Set(
      shown
        .filter((p) => sameField(p, name))
        .flatMap((p) => {
          const idx = p.field.split('.')[1];
          if (idx === undefined || !/^\d+$/.test(idx)) return [withPart(p)];
          const item = items[Number(idx)];
          if (item?.errors.length) return [];
          return [`${item?.name ?? `item ${Number(idx) + 1}`}: ${p.reason}`];
        }),
    ),
  ];
}
