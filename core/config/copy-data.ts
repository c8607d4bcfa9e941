/**
 * Config data (the whole config, or a plugin's options) copied for validation to write defaults into: its
 * arrays and plain objects copied, any other value kept as it is for the schema to refuse by its path. Not
 * structuredClone: jiti does not type-check a TypeScript config, and a function or a URL object in it made
 * loading throw "could not be cloned", naming no field.
 */
export function copyData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyData);
  if (typeof value !== 'object' || value === null) return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  // fromEntries defines each key as its own property: a key "__proto__" stays a key
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyData(v)]));
}
