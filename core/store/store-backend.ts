import type Keyv from 'keyv';
import type { LogEntry, LogPage, LogQuery } from './log-entry';
import type { SpendBucket } from './spend-rollup';
import type { SecretBox } from './secrets/secret-box';

/**
 * A named set of records (keys, MCP servers, tool states...). Listing is a native operation of each
 * backend, which keyv alone does not offer portably.
 */
export interface Collection<T> {
  get(id: string): Promise<T | undefined>;
  set(id: string, value: T): Promise<void>;
  delete(id: string): Promise<boolean>;
  all(): Promise<T[]>;
  /** every record with its id */
  entries(): Promise<[string, T][]>;
  /**
   * Write `next` only if the record still equals `expected` (as stored JSON), atomically on every
   * backend; false if it changed meanwhile (or is gone). For background rewrites that must not undo a
   * concurrent change, e.g. re-encryption under a new key.
   */
  replace(id: string, expected: T, next: T): Promise<boolean>;
}

/** Runs one read of a longer walk of the store (see `queryLogs`). */
export type StoreStep = <T>(read: () => Promise<T>) => Promise<T>;

/** A step that adds nothing: the read as it is. */
export const directStep: StoreStep = (read) => read();

/**
 * Storage behind the repositories (design.md §6): keyv for plain values with TTLs, plus what must be
 * native to each backend: collections, atomic counters and the request log.
 */
export interface StoreBackend {
  readonly kind: 'memory' | 'sqlite' | 'redis' | 'postgres';
  /** plain values, with optional TTL; namespaced per user of it */
  keyv(namespace: string): Keyv;
  collection<T>(name: string): Collection<T>;
  /** the key ring that seals collections of secrets (secrets/sealed-collection.ts) */
  readonly secretBox: SecretBox;
  /** atomically add `amount` to a counter and return the new value (float) */
  incrByFloat(key: string, amount: number, ttlMs?: number): Promise<number>;
  getCounter(key: string): Promise<number>;
  /** one entry: `appendLogs([entry])` */
  appendLog(entry: LogEntry): Promise<void>;
  /**
   * Every entry of a batch and its spend rollups, atomically: one transaction on SQLite and PostgreSQL,
   * one MULTI on Redis. The log writer settles a batch per event-loop turn, so a batch of 50 must be cheap.
   */
  appendLogs(entries: LogEntry[]): Promise<void>;
  /**
   * A page of the log, newest first. A filter no index serves reads many rows: each read goes through
   * `step` (the store guard), so its timeout bounds one read of the store, not the whole walk.
   */
  queryLogs(query: LogQuery, step?: StoreStep): Promise<LogPage>;
  /** every entry at or after `since`, oldest first */
  scanLogs(since?: string): AsyncIterable<LogEntry>;
  /**
   * The spend rollup rows (spend-rollup.ts) of the hours in [since, until), both hour boundaries; all of
   * them without bounds. Written with the log rows by `appendLogs`, never removed by the log's retention.
   * Rows outlive the log and add up over months: each read goes through `step`, as in `queryLogs`.
   */
  spendBuckets(since?: string, until?: string, step?: StoreStep): Promise<SpendBucket[]>;
  /** Delete at most `limit` log entries older than `before` (ISO time), oldest first; returns how many went. */
  sweepLogs(before: string, limit: number): Promise<number>;
  /**
   * Append `id` to the list named `list` (oldest first), keep its newest `keep` ids and return the ones
   * pushed out, oldest first. The list expires `ttlMs` after its last append. Atomic on every backend,
   * so concurrent appends never lose an id (per-owner caps rely on it).
   */
  pushRecent(list: string, id: string, keep: number, ttlMs: number): Promise<string[]>;
  /**
   * Delete at most `limit` values whose TTL has passed by the backend's clock (keyv values and recent
   * lists); returns how many went. Reading an expired value already misses it; this frees the space of
   * the ones nobody reads again (see store/sweeper.ts).
   */
  sweepExpired(limit: number): Promise<number>;
  close(): Promise<void>;
}
