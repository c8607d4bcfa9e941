import { hash, timingSafeEqual } from 'node:crypto';

/** Keys are stored and compared as SHA-256 digests, never in clear. */
export function hashKey(secret: string): string {
  // the one-shot hash: every request hashes its key, and it skips the Hash object and its stream setup
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A stable, non-secret id for a key that has none: derived from its digest. */
export function keyIdFromDigest(digest: string): string {
  return `key_${digest.slice(0, 12)}`;
}

