import type { InboundInfo } from '../plugins/contracts';

/**
 * A request body as JSON with its top-level `model` set to `model`: what a pass-through provider sends.
 *
 * When the client's own text is at hand (`inbound.bodyText`: the request unchanged since it was parsed),
 * only the model's value is replaced in it. Serialising a 1 KB chat request again costs about as much as
 * parsing it (about 30,000 instructions on Node 20), on every request. The text is used only when the
 * swap cannot be read two ways (swapModel); otherwise, and without the text, the request is serialised.
 */
export function bodyWithModel(request: { model?: unknown }, model: string, inbound: InboundInfo): string {
  const text = inbound.bodyText;
  if (text !== undefined && typeof request.model === 'string') {
    const swapped = swapModel(text, request.model, model);
    if (swapped !== undefined) return swapped;
  }
  return JSON.stringify({ ...request, model });
}

/**
 * `text` with the value of its top-level `model` key, `from`, replaced by `to`; undefined unless that is
 * certain. The key must open the object (`{"model": "from", ...`, whitespace allowed) and be the only one
 * that could be read as `model`: no other `"model"` anywhere in the text (a key given twice counts where
 * it is last, nested keys could not be told from it cheaply), and no `\u` escape of one of its letters
 * (`"mod\u0065l"` is the same key). The value must be spelled as JSON.stringify spells `from`.
 */
export function swapModel(text: string, from: string, to: string): string | undefined {
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) return undefined;
  at = skipSpace(text, at + 1);
  if (!text.startsWith(MODEL_KEY, at)) return undefined;
  at = skipSpace(text, at + MODEL_KEY.length);
  if (text.charCodeAt(at) !== COLON) return undefined;
  const valueAt = skipSpace(text, at + 1);
  const quoted = JSON.stringify(from);
  if (!text.startsWith(quoted, valueAt)) return undefined;
  const valueEnd = valueAt + quoted.length;
  const next = text.charCodeAt(skipSpace(text, valueEnd));
  if (next !== COMMA && next !== CLOSE_BRACE) return undefined;
  if (text.includes(MODEL_KEY, valueEnd)) return undefined;
  if (text.includes('\\u') && ESCAPED_MODEL_LETTER.test(text)) return undefined;
  return text.slice(0, valueAt) + JSON.stringify(to) + text.slice(valueEnd);
}

const MODEL_KEY = '"model"';
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COLON = 0x3a;
const COMMA = 0x2c;
/** \u escapes of d, e, l, m, o (0x64 0x65 0x6c 0x6d 0x6f), in either case */
const ESCAPED_MODEL_LETTER = /\\u00(?:6[45cdfCDF])/;

/** The index of the first character at or after `at` that is not JSON whitespace. */
function skipSpace(text: string, at: number): number {
  for (;;) {
    const c = text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return at;
    at++;
  }
}
