/**
 * Lookup tables keyed by names from outside (tool, server, header, model names, JSON keys from clients and
 * upstreams). A plain object answers `obj["constructor"]` with `Object` and `obj["__proto__"]` with
 * `Object.prototype`, and assigning through such a key mutates a prototype every tenant shares. Tables that
 * must stay JSON (records in the store, config shapes) are null-prototype objects read with `ownValue`;
 * everything else is a `Map`.
 */

/** A table with no prototype: every key, `__proto__` included, is an ordinary own property. */
export function emptyLookup<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * A null-prototype copy of a table read from JSON (store rows, request bodies, upstream answers), so later
 * reads and writes by name cannot reach `Object.prototype`. Shallow: the values are kept as they are.
 */
export function lookupFrom<T>(table: Readonly<Record<string, T>> | null | undefined): Record<string, T> {
  const out = emptyLookup<T>();
  if (table) for (const key of Object.keys(table)) out[key] = table[key];
  return out;
}

/** `table[key]` only when `key` is the table's own property; never an inherited member. */
export function ownValue<T>(table: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return table && Object.hasOwn(table, key) ? table[key] : undefined;
}
