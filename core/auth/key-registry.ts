import { randomBytes } from 'node:crypto';
import type { KeyConfig } from '../config/types';
import type { Collection, StoreBackend } from '../store/store-backend';
import { ConfigError, StoreUnavailableError } from '../errors/gateway-error';
import type { ChangeEvents } from '../store/events/change-events';
import { compileModelPatterns } from './model-patterns';
import { digestsEqual, hashKey, keyIdFromDigest } from './key-hash';
import type { Principal } from './principal';

/** A key as persisted (admin API) or declared (config): the secret only as its digest. */
export interface StoredKey extends Omit<KeyConfig<string>, 'key'> {
  id: string;
  digest: string;
  createdAt: string;
  /** where it came from: config keys cannot be changed through the API */
  source: 'config' | 'api';
  /** a revoked key stays as a tombstone, so its id is never given out again */
  revoked?: boolean;
  revokedAt?: string;
}

/**
 * Ids the gateway generates: `key_` and 24 random characters (144 bits). Config keys keep their own ids
 * (declared, or `key_` and 12 hex digits of the digest), and may not take this shape, so the two can never meet.
 */
export const GENERATED_ID = /^key_[A-Za-z0-9_-]{24}$/;

function generatedId(): string {
  return `key_${randomBytes(18).toString('base64url')}`;
}

const DYNAMIC_CACHE_MS = 5_000;

export interface KeyRegistryOptions {
  /** changes from the other instances (and the ones this instance tells them about) */
  events?: ChangeEvents;
  /** how long a key that was valid keeps working from cache while the store cannot be reached (default 60 s) */
  graceMs?: number;
}

interface CachedLookup {
  principal: (Principal & { digest: string }) | null;
  /** fresh until: after it the store is asked again */
  until: number;
  /** when the store last confirmed it: a valid key is served from cache up to `graceMs` after it */
  confirmedAt: number;
}

/**
 * Looks up the principal for a presented key. Lookups go by the SHA-256 digest of the presented value
 * (so timing depends on the digest, not on how much of a real key was guessed), then the digests are
 * compared in constant time. Config keys live in memory; API-created keys live in the store, so every
 * gateway instance on a shared store sees them (cached for a few seconds).
 */
export class KeyRegistry {
  private readonly byDigest = new Map<string, Principal & { digest: string; stored: StoredKey }>();
  private readonly dynamicCache = new Map<string, CachedLookup>();
  private readonly adminDigest?: string;
  readonly collection: Collection<StoredKey>;
  private readonly events?: ChangeEvents;
  private readonly graceMs: number;
  private readonly unsubscribe: () => void;
  /** bumped by every invalidation: a lookup that started before one does not cache what it read */
  private generation = 0;

  constructor(configKeys: KeyConfig<string>[], adminKey: string | undefined, private readonly store: StoreBackend, private readonly now: () => number, options: KeyRegistryOptions = {}) {
    this.collection = store.collection<StoredKey>('keys');
    this.events = options.events;
    this.graceMs = options.graceMs ?? 60_000;
    this.unsubscribe = options.events?.subscribe((event) => {
      if (event.type === 'key.changed') this.forget(event.keyId);
    }) ?? (() => undefined);
    for (const k of configKeys) {
      if (k.id && GENERATED_ID.test(k.id)) throw new ConfigError('keys', `key id "${k.id}" has the shape of a generated id (key_ and 24 characters); choose another`);
      const digest = hashKey(k.key);
      const { key: _secret, ...rest } = k;
      const stored: StoredKey = { ...rest, id: k.id ?? keyIdFromDigest(digest), digest, createdAt: new Date(0).toISOString(), source: 'config' };
      this.byDigest.set(digest, toPrincipal(stored));
    }
    if (adminKey) this.adminDigest = hashKey(adminKey);
  }

  /** The config keys, for listing through the management API (digests are never listed). */
  configKeys(): StoredKey[] {
    return [...this.byDigest.values()].map((p) => p.stored);
  }

  /**
   * The principal of a presented key. Synchronous (no promise) when the answer is known without the store:
   * the admin key, a config key, a store key cached and fresh; the auth stage then goes on without a hop.
   */
  authenticate(presented: string | undefined): Principal | undefined | Promise<Principal | undefined> {
    if (!presented) return undefined;
    const digest = hashKey(presented);
    if (this.adminDigest && digestsEqual(digest, this.adminDigest)) return PLATFORM_ADMIN;
    // a config key found by its digest is that digest: comparing the two again would prove nothing
    const fromConfig = this.byDigest.get(digest);
    if (fromConfig) return fromConfig;
    const now = this.now();
    const cached = this.dynamicCache.get(digest);
    if (cached && cached.until > now) return cached.principal ?? undefined;
    return this.lookupDynamic(digest, now, cached);
  }

  private async lookupDynamic(digest: string, now: number, cached: CachedLookup | undefined): Promise<Principal | undefined> {
    const generation = this.generation;
    let principal: CachedLookup['principal'];
    try {
      const id = await this.store.keyv('key-digests').get<string>(digest);
      const stored = id ? await this.collection.get(id) : undefined;
      principal = stored && !stored.revoked && digestsEqual(digest, stored.digest) ? toPrincipal(stored) : null;
    } catch (err) {
      // The store did not answer: a key it confirmed lately keeps working for the grace period; anything
      // else is 503, never "invalid key" (and the error is not cached, so the next request asks again).
      if (cached?.principal && now - cached.confirmedAt < this.graceMs) return cached.principal;
      throw err instanceof StoreUnavailableError ? err : new StoreUnavailableError(undefined, { cause: err });
    }
    if (generation === this.generation) {
      if (this.dynamicCache.size > 10_000) this.dynamicCache.clear();
      this.dynamicCache.set(digest, { principal, until: now + DYNAMIC_CACHE_MS, confirmedAt: now });
    }
    return principal ?? undefined;
  }

  /** Drop what is cached of one key (a change here or on another instance). */
  private forget(keyId: string): void {
    this.generation += 1;
    for (const [digest, entry] of this.dynamicCache) if (entry.principal?.keyId === keyId) this.dynamicCache.delete(digest);
  }

  /** Tell every instance (this one included) that a key changed; the store is already written. */
  private async announce(keyId: string, revoked: boolean): Promise<void> {
    this.forget(keyId);
    // best effort: an instance that misses it still rereads the key within DYNAMIC_CACHE_MS
    await this.events?.publish({ type: 'key.changed', keyId, ...(revoked ? { revoked } : {}) }).catch(() => undefined);
  }

  close(): void {
    this.unsubscribe();
  }

  /**
   * Create a key through the management API; the secret is returned once and stored only as a digest.
   * The id is always generated: one that exists (a config key, a live key or a revoked key's tombstone)
   * is never handed out, so nothing stored under an old id can reach a new key.
   */
  async create(input: Omit<StoredKey, 'id' | 'digest' | 'createdAt' | 'source'>): Promise<{ key: StoredKey; secret: string }> {
    const secret = `sk-mg-${randomBytes(24).toString('base64url')}`;
    const digest = hashKey(secret);
    let id = generatedId();
    while (this.configKeys().some((k) => k.id === id) || (await this.collection.get(id))) id = generatedId();
    const key: StoredKey = { ...input, id, digest, createdAt: new Date(this.now()).toISOString(), source: 'api' };
    await this.collection.set(key.id, key);
    await this.store.keyv('key-digests').set(digest, key.id);
    return { key, secret };
  }

  async update(key: StoredKey): Promise<void> {
    await this.collection.set(key.id, key);
    await this.announce(key.id, false);
  }

  /** The key stops working at once; its record stays as a tombstone (see `create`). */
  async revoke(key: StoredKey): Promise<void> {
    await this.collection.set(key.id, { ...key, revoked: true, revokedAt: new Date(this.now()).toISOString() });
    await this.store.keyv('key-digests').delete(key.digest);
    await this.announce(key.id, true);
  }
}

export const PLATFORM_ADMIN: Principal = {
  keyId: 'platform-admin',
  org: null,
  role: 'platform_admin',
  allowsModel: () => true,
  guardrails: [],
};

function toPrincipal(stored: StoredKey): Principal & { digest: string; stored: StoredKey } {
  return {
    keyId: stored.id,
    keyName: stored.name,
    org: stored.org,
    role: stored.role ?? 'member',
    allowsModel: compileModelPatterns(stored.models),
    models: stored.models,
    mcp: stored.mcp,
    guardrails: stored.guardrails ?? [],
    maxBudget: stored.maxBudget,
    budgetDuration: stored.budgetDuration,
    rpm: stored.rpm,
    tpm: stored.tpm,
    digest: stored.digest,
    stored,
  };
}
