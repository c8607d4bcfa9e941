import type { TextSegment } from '../plugins/contracts';

/**
 * A place in a request or response body that holds text an engine should see, with a way to write
 * masked text back to exactly that place. Extractors build slots over the live body; engines only ever
 * see `{ id, text, path }` segments (design.md §4).
 */
export interface TextSlot {
  readonly path: string;
  /** the current text (updated by `putBack`, so a later engine sees an earlier one's masking) */
  text: string;
  put(text: string): void;
}

export class SlotCollector {
  readonly slots: TextSlot[] = [];

  /** `holder[key]`, when it is a string. */
  field(holder: any, key: string | number, path: string): void {
    const text = holder?.[key];
    if (typeof text !== 'string' || text.length === 0) return;
    this.slots.push({ path, text, put: (masked) => void (holder[key] = masked) });
  }

  /** Every string value inside a JSON value (object keys stay as they are). */
  strings(holder: any, key: string | number, path: string, depth = 0): void {
    const value = holder?.[key];
    if (typeof value === 'string') return this.field(holder, key, path);
    if (depth > 64 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) value.forEach((_, i) => this.strings(value, i, `${path}[${i}]`, depth + 1));
    else for (const k of Object.keys(value)) this.strings(value, k, `${path}.${k}`, depth + 1);
  }

  /**
   * A JSON document held in a string (tool-call arguments): its string values are slots, and masked
   * text is written back by re-serialising the document. Text that is not JSON is one plain slot.
   */
  jsonString(holder: any, key: string | number, path: string): void {
    const raw = holder?.[key];
    // arguments sent as an object (against the API's own rules) are still inspected, never waved through
    if (raw !== null && typeof raw === 'object') return this.strings(holder, key, path);
    if (typeof raw !== 'string' || raw.length === 0) return;
    let doc: unknown;
    try {
      doc = JSON.parse(raw);
    } catch {
      return this.field(holder, key, path);
    }
    if (doc === null || typeof doc !== 'object') return this.field(holder, key, path);
    const box = { doc };
    const before = this.slots.length;
    this.strings(box, 'doc', path);
    for (let i = before; i < this.slots.length; i++) {
      const inner = this.slots[i];
      this.slots[i] = {
        path: inner.path,
        text: inner.text,
        put: (masked) => {
          inner.put(masked);
          holder[key] = JSON.stringify(box.doc);
        },
      };
    }
  }
}

export function toSegments(slots: readonly TextSlot[]): TextSegment[] {
  return slots.map((s, id) => ({ id, text: s.text, path: s.path }));
}

/** Write an engine's masked segments back; ids that are unknown are ignored. */
export function putBack(slots: readonly TextSlot[], masked: readonly { id: number; text: string }[]): void {
  for (const m of masked) {
    const slot = slots[m.id];
    if (slot && typeof m.text === 'string' && m.text !== slot.text) {
      slot.put(m.text);
      slot.text = m.text;
    }
  }
}
