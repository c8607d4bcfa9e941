/**
 * Tool call ids for Gemini function calls. Gemini matches function answers by name and often sends no
 * call id; the chat format needs one. Thinking models also attach a `thoughtSignature` to a call part
 * that must come back on the next turn, and a chat client keeps nothing but the call id: so the
 * signature rides inside the id (`<id>__thought__<signature>`) and is split off again on the way up.
 */
const SEPARATOR = '__thought__';

export function toolCallId(base: string, thoughtSignature: string | undefined): string {
  return thoughtSignature ? `${base}${SEPARATOR}${thoughtSignature}` : base;
}

export function splitToolCallId(id: unknown): { base: string; thoughtSignature?: string } {
  if (typeof id !== 'string') return { base: '' };
  const at = id.indexOf(SEPARATOR);
  if (at < 0) return { base: id };
  return { base: id.slice(0, at), thoughtSignature: id.slice(at + SEPARATOR.length) };
}

/** The id of the `index`-th call of a response: Gemini's own when it sent one. */
export function baseCallId(callId: string | undefined, responseId: string | undefined, index: number): string {
  if (callId) return callId;
  return responseId ? `call_${responseId}_${index}` : `call_${index}`;
}
