/** A JSON object (not null, not an array) read from outside: its keys are still to be checked with Object.hasOwn. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
