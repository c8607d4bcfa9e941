/**
 * When a value keyv stored expires: keyv wraps every value as `{ value, expires }` (ms since the epoch,
 * absent without a TTL) and serialises it as JSON. Infinity for a value that never expires or that is not
 * keyv's (a counter, say), so a sweep never deletes what it does not understand.
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
  const expires = (data as { expires?: unknown } | null | undefined)?.expires;
  return typeof expires === 'number' ? expires : Infinity;
}
