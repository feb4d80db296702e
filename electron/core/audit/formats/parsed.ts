/**
 * What a format parser reports, pushed as it reads so the importer holds one batch, never the file.
 * `item` numbers count events in file order (rejected ones included), `line` is where the item begins.
 */
export type Parsed =
  /** `text` is the item's own JSON text when it stood alone (not inside a page): stored without re-serializing. */
  | { kind: 'item'; line: number; item: number; value: unknown; text?: string }
  | { kind: 'reject'; line: number; item: number; reason: string }
  | { kind: 'fatal'; line: number; reason: string }
  | { kind: 'warning'; message: string };

export type Emit = (p: Parsed) => void;

export interface FormatParser {
  feed(chunk: string, emit: Emit): void;
  end(emit: Emit): void;
}

/** One event bigger than this is hostile or broken; it is rejected without being buffered further. */
export const MAX_ITEM_CHARS = 4 * 1024 * 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An API response page (`{data: [...], meta}`) stands for its events; anything else is one item. */
export function pageItems(v: unknown): unknown[] | null {
  return isObj(v) && Array.isArray(v.data) && !('event_id' in v) ? v.data : null;
}

export function jsonError(err: unknown): string {
  return `not valid JSON (${err instanceof Error ? err.message.replace(/\s+/g, ' ').slice(0, 120) : String(err)})`;
}
