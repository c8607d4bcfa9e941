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

/** How many steps a segment's path names; a deeper value's path is that of its container at this depth. */
const PATH_DEPTH = 64;

export class SlotCollector {
  readonly slots: TextSlot[] = [];

  /** `holder[key]`, when it is a string. */
  field(holder: any, key: string | number, path: string): void {
    const text = holder?.[key];
    if (typeof text !== 'string' || text.length === 0) return;
    this.slots.push({ path, text, put: (masked) => void (holder[key] = masked) });
  }

  /**
   * Every string value inside a JSON value (object keys stay as they are), at any depth: a depth limit
   * would wave through whatever is nested below it. Walked with a stack of its own, in document order,
   * so a deep value (tool-call arguments are parsed from a string, with no nesting limit) cannot exhaust
   * the call stack; past PATH_DEPTH levels a segment's path names its container at that depth, so the
   * paths of a deep value do not grow with the square of its depth.
   */
  strings(holder: any, key: string | number, path: string): void {
    const todo: [any, string | number, string, number][] = [[holder, key, path, 0]];
    // parsed JSON has no cycles, but a body built in process might: each container is walked once
    const walked = new Set<object>();
    while (todo.length > 0) {
      const [at, k, where, depth] = todo.pop()!;
      const value = at?.[k];
      if (typeof value === 'string') {
        this.field(at, k, where);
        continue;
      }
      if (value === null || typeof value !== 'object' || walked.has(value)) continue;
      walked.add(value);
      const named = depth < PATH_DEPTH;
      const next: [any, string | number, string, number][] = Array.isArray(value)
        ? value.map((_, i) => [value, i, named ? `${where}[${i}]` : where, depth + 1])
        : Object.keys(value).map((name) => [value, name, named ? `${where}.${name}` : where, depth + 1]);
      for (let i = next.length - 1; i >= 0; i--) todo.push(next[i]);
    }
  }

  /**
   * A JSON document held in a string (tool-call arguments): its string values are slots, and masked
   * text is written back where the value is written, the rest of the text left as it was. Parsing and
   * writing the document again would change what the engines did not mask (a number beyond 2^53 lost
   * its last digits) and keep only the last of a key given twice, while the text sent on still held the
   * first, unchecked. Text that is not JSON is one plain slot.
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
    const values = jsonStringValues(raw, path);
    // the text between the values and each value as written, alternately
    const pieces: string[] = [];
    let at = 0;
    for (const v of values) {
      pieces.push(raw.slice(at, v.start), raw.slice(v.start, v.end));
      at = v.end;
    }
    pieces.push(raw.slice(at));
    values.forEach((v, n) => {
      const text = JSON.parse(pieces[2 * n + 1]) as string;
      if (text.length === 0) return;
      this.slots.push({
        path: v.path,
        text,
        put: (masked) => {
          pieces[2 * n + 1] = JSON.stringify(masked);
          holder[key] = pieces.join('');
        },
      });
    });
  }
}

/** Where the string in valid JSON `text` that opens at `start` ends (just after its closing quote). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) return i + 1;
  }
  return text.length;
}

/**
 * The string values of valid JSON `text` (its keys are not values), as written: where each is and its
 * path, in the order of the text. Read with a stack of its own, as `strings` walks.
 */
function jsonStringValues(text: string, path: string): { start: number; end: number; path: string }[] {
  const out: { start: number; end: number; path: string }[] = [];
  // one frame per open container: its path, whether it is an object, its current index or key
  const stack: { path: string; object: boolean; index: number; key: string | null }[] = [];
  const here = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return path;
    if (stack.length > PATH_DEPTH) return top.path;
    return top.object ? `${top.path}.${top.key}` : `${top.path}[${top.index}]`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.object && top.key === null) top.key = JSON.parse(text.slice(i, end)) as string;
      else out.push({ start: i, end, path: here() });
      i = end - 1;
    } else if (c === '{' || c === '[') {
      stack.push({ path: here(), object: c === '{', index: 0, key: null });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.object) top.key = null;
      else if (top) top.index++;
    }
  }
  return out;
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
