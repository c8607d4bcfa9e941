import type Keyv from 'keyv';

/**
 * keyv wraps every value as `{ value, expires }` with `expires` from the real clock (Date.now), which a
 * test cannot move. For the sweep to decide expiry by the backend's clock (the gateway's, injectable) as
 * everything else does, the memory and Redis backends also stamp `expiresAt` by that clock into what keyv
 * stores. (SQLite's own adapter keeps `expires_at` by the backend's clock already.)
 */
export function stampExpiry(kv: Keyv, now: () => number): Keyv {
  const serialize = kv.serialize;
  if (!serialize) return kv;
  kv.serialize = (data) => {
    const expires = (data as { expires?: unknown }).expires;
    const stamped = typeof expires === 'number' ? { ...data, expiresAt: now() + (expires - Date.now()) } : data;
    return serialize(stamped as typeof data);
  };
  return kv;
}

/**
 * When a value stored through keyv expires: the `expiresAt` stamped above, else keyv's own `expires`.
 * Infinity for a value that never expires or that is not keyv's (a counter, say), so a sweep never
 * deletes what it does not understand.
 */
export function keyvExpiry(raw: unknown): number {
  let data = raw;
  if (typeof raw === 'string') {
    if (raw[0] !== '{') return Infinity;
    try {
      data = JSON.parse(raw);
    } catch {
      return Infinity;
    }
  }
  const { expiresAt, expires } = (data ?? {}) as { expiresAt?: unknown; expires?: unknown };
  return typeof expiresAt === 'number' ? expiresAt : typeof expires === 'number' ? expires : Infinity;
}
