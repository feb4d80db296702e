import type { InvalidParam } from '../../../shared/catalogue/index.ts';
import { localAllowed, type MediaField, type Ref } from './video.svelte.ts';

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

/**
 * Local files already in a field the backend now in use cannot take them in (added on the
 * Sandbox or a loopback address, then switched to the live service): named, so Submit is
 * blocked before the engine refuses the batch.
 */
export function unsendableMessages(f: MediaField, refs: Ref[], live: boolean): string[] {
  if (localAllowed(f, live)) return [];
  const how = f.encodings.includes('upload') ? 'an HTTPS URL or an existing upl_vid_ id' : 'an HTTPS URL';
  return refs
    .filter((r) => r.field === f.name && r.local)
    .map((r) => `${r.name}: a local file cannot be sent to the live service; remove it and enter ${how}`);
}

/** What the live service takes in this field, when it takes no local file. */
export function liveNote(f: MediaField, live: boolean): string {
  if (!live || localAllowed(f, live)) return '';
  return f.encodings.includes('upload')
    ? `The live service takes ${f.label.toLowerCase()} only as an HTTPS URL or an existing upl_vid_ id; local files can be uploaded only to the Sandbox.`
    : `The live service takes ${f.label.toLowerCase()} only as an HTTPS URL.`;
}
