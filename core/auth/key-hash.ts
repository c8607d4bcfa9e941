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

/** Entries kept before the cache starts over: far more keys than one instance serves at once. */
const DIGEST_CACHE_SIZE = 10_000;
/** Longer strings are hashed every time: 10,000 of them could hold a lot of memory, and no real key is this long. */
const MAX_CACHED_KEY_LENGTH = 256;

/**
 * The SHA-256 of presented keys, remembered: hashing was about 2% of the CPU of a request, for the same
 * few keys every time. Only the digest is remembered; whether the key is valid, revoked or changed is
 * still decided on every request by the lookups that follow (by digest), so revocation is unaffected.
 *
 * The presented strings stay in this process's memory only (where the requests that carried them already
 * were), never written anywhere. Any presented string is kept, wrong ones included, but the cache is
 * bounded and starts over when full: a flood of wrong keys costs a re-hash of the real ones, nothing more.
 */
export class DigestCache {
  private readonly byKey = new Map<string, string>();

  of(presented: string): string {
    let digest = this.byKey.get(presented);
    if (digest === undefined) {
      digest = hashKey(presented);
      if (presented.length <= MAX_CACHED_KEY_LENGTH) {
        if (this.byKey.size >= DIGEST_CACHE_SIZE) this.byKey.clear();
        this.byKey.set(presented, digest);
      }
    }
    return digest;
  }
}
