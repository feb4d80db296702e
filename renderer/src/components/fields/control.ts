import type { Component } from 'svelte';
import { isLocalPath, type Field, type InvalidParam } from '../../../../shared/catalogue/index.ts';
import { acceptList } from '../../../../shared/validation/extensions.ts';

/** What ToolForm gives each field's control: the field, its value and how to change it. */
export interface ControlProps<F extends Field = Field> {
  field: F;
  value: unknown;
  /** Sets the field's value; undefined, '' and NaN take it out of the request. */
  set: (v: unknown) => void;
  /** The control's element id, which the field's label points at. */
  id: string;
  invalid: boolean;
  /** The id of the field's error, warning or help note. */
  describedby?: string;
  /** Every field error, for controls that mark one item of a list (`refs.1`). */
  errors: readonly InvalidParam[];
  /** A picked file as the core can read it, in place of encoding it here (see ToolForm). */
  pickFile?: (f: Field, file: File) => Promise<string | null>;
}

/** A field kind's control; `ownLabel` when it labels itself (a checkbox and its text). */
export type ControlEntry<K extends Field['kind']> = {
  control: Component<ControlProps<Extract<Field, { kind: K }>>>;
  ownLabel?: boolean;
};

export const inputText = (e: Event) => (e.currentTarget as HTMLInputElement).value;
export const inputNumber = (e: Event) => Number((e.currentTarget as HTMLInputElement).value);
export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The list with item i replaced. */
export const withItem = <T>(l: readonly T[], i: number, v: T): T[] => l.map((x, n) => (n === i ? v : x));
/** The list without item i; undefined once empty, so the field leaves the request. */
export function withoutItem<T>(l: readonly T[], i: number): T[] | undefined {
  const rest = l.filter((_, n) => n !== i);
  return rest.length ? rest : undefined;
}

// ---- media read locally, encoded as the field accepts it ------------------------------------
async function encodeFile(f: Field & { encodings: readonly string[] }, file: File): Promise<string | null> {
  const buf = new Uint8Array(await file.arrayBuffer());
  let bin = '';
  for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode(...buf.subarray(i, i + 0x8000));
  const b64 = btoa(bin);
  if (f.encodings.includes('base64')) return b64;
  if (f.encodings.includes('dataUri')) return `data:${file.type || 'image/png'};base64,${b64}`;
  return null;
}
export const canEncode = (f: Field) =>
  'encodings' in f && (f.encodings.includes('base64') || f.encodings.includes('dataUri'));
export const acceptOf = (f: Field) =>
  'formats' in f && f.formats ? acceptList(f.formats) : `${'media' in f ? f.media : 'image'}/*`;
/** Inline encodings are summarised (and read-only); a URL or a local path is shown as it is. */
export const encoded = (v: unknown): v is string => typeof v === 'string' && v.length > 80 && !isLocalPath(v);
export function describe(v: unknown): string {
  if (typeof v !== 'string') return '';
  if (!encoded(v)) return v;
  return `${v.startsWith('data:') ? 'data URI' : 'encoded file'}, ${Math.round((v.length * 3) / 4 / 1024)} KB`;
}

/** The file chosen in a file input, as the field will send it; null when there is none to use. */
export async function pickedMedia(f: Field, e: Event, pickFile?: ControlProps['pickFile']): Promise<string | null> {
  const input = e.currentTarget as HTMLInputElement;
  const file = input.files?.[0];
  input.value = '';
  if (!file || !('encodings' in f)) return null;
  return pickFile ? await pickFile(f, file) : await encodeFile(f, file);
}
