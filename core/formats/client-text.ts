/**
 * Text made from a value a client sent where the gateway wants a string and no schema has checked one:
 * the string itself, '' for undefined, otherwise its JSON. Never `String()` or a template literal: a JSON
 * object can carry a `toString` key of its own (`{"toString":1}`), String() of it throws, and a client's
 * mistake became a 500 (`String({})` would only say "[object Object]" anyway).
 */
export function clientText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : (JSON.stringify(value) ?? '');
}
