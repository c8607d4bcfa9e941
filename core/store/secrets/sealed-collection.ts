/**
 * A collection whose records are secrets: each record is stored as one AES-256-GCM ciphertext (see
 * secret-box.ts) bound to its collection and id. Callers read and write plain objects; the backend
 * (SQLite row, Redis hash field, memory) only ever holds the sealed form.
 */
import type { Collection, StoreBackend } from '../store-backend';
import { isSealed, type SealedValue } from './secret-box';

/** Every collection that holds secrets: what `rotate-secret-key` re-encrypts. */
export const SEALED_COLLECTIONS = ['mcp_server_secrets'] as const;
export type SealedCollectionName = (typeof SEALED_COLLECTIONS)[number];

export interface SealedCollection<T> extends Collection<T> {
  /**
   * Re-encrypt every record under the current key: records sealed with an older key of the ring, and
   * records an older version stored in clear. Returns how many were rewritten.
   */
  resealAll(): Promise<number>;
  /** Encrypt the records an older version stored in clear; returns how many. */
  sealUnsealed(): Promise<number>;
}

export function sealedCollection<T>(store: StoreBackend, name: SealedCollectionName): SealedCollection<T> {
  const raw = store.collection<SealedValue | T>(name);
  const box = store.secretBox;
  const context = (id: string) => `${name}/${id}`;
  const open = (id: string, value: SealedValue | T): T => (isSealed(value) ? (JSON.parse(box.open(value, context(id))) as T) : value);
  /**
   * Seal what was read again under the current key, unless the record changed meanwhile (a gateway
   * wrote a new secret, already under the current key): that write must win, not the old value.
   */
  const rewrite = async (id: string, value: SealedValue | T): Promise<boolean> => raw.replace(id, value, box.seal(JSON.stringify(open(id, value)), context(id)));
  return {
    async get(id) {
      const value = await raw.get(id);
      return value === undefined ? undefined : open(id, value);
    },
    async set(id, value) {
      await raw.set(id, box.seal(JSON.stringify(value), context(id)));
    },
    delete: (id) => raw.delete(id),
    async replace(id, expected, next) {
      const stored = await raw.get(id);
      if (stored === undefined || JSON.stringify(open(id, stored)) !== JSON.stringify(expected)) return false;
      return raw.replace(id, stored, box.seal(JSON.stringify(next), context(id)));
    },
    async all() {
      return (await raw.entries()).map(([id, value]) => open(id, value));
    },
    async entries() {
      return (await raw.entries()).map(([id, value]) => [id, open(id, value)] as [string, T]);
    },
    async resealAll() {
      let count = 0;
      for (const [id, value] of await raw.entries()) {
        if (isSealed(value) && value.kid === box.currentKeyId) continue;
        if (await rewrite(id, value)) count++;
      }
      return count;
    },
    async sealUnsealed() {
      let count = 0;
      for (const [id, value] of await raw.entries()) if (!isSealed(value) && (await rewrite(id, value))) count++;
      return count;
    },
  };
}
