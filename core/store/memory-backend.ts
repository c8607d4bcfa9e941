import Keyv from 'keyv';
import type { Collection, StoreBackend } from './store-backend';
import { SecretBox } from './secrets/secret-box';
import { keyvExpiry, stampExpiry } from './keyv-expiry';
import { matchesLogQuery, type LogEntry, type LogPage, type LogQuery } from './log-entry';
import { foldIntoBuckets, type SpendBucket } from './spend-rollup';
import type { Logger } from '../plugins/contracts';

class MemoryCollection<T> implements Collection<T> {
  private readonly items = new Map<string, T>();
  async get(id: string) {
    return structuredClone(this.items.get(id));
  }
  async set(id: string, value: T) {
    this.items.set(id, structuredClone(value));
  }
  async delete(id: string) {
    return this.items.delete(id);
  }
  async all() {
    return [...this.items.values()].map((v) => structuredClone(v));
  }
  async replace(id: string, expected: T, next: T) {
    if (!this.items.has(id) || JSON.stringify(this.items.get(id)) !== JSON.stringify(expected)) return false;
    this.items.set(id, structuredClone(next));
    return true;
  }
  async entries() {
    return [...this.items].map(([id, v]) => [id, structuredClone(v)] as [string, T]);
  }
}

/**
 * The request-log rows `memory://` keeps: at least the newest this many. A process's memory is all it
 * has, and a load test through a throwaway gateway writes hundreds of thousands of rows (about 400 bytes
 * of heap each: 672,927 rows in 100 s took the process to 376 MiB, still rising). Spend rollups and
 * counters are kept in full, so spend views and budgets see every request; only the log's listing and
 * scans forget the oldest.
 */
export const MEMORY_LOG_ROWS = 50_000;
/** the oldest rows go a batch at a time, so trimming costs a copy per batch, not one per row */
export const MEMORY_LOG_TRIM_BATCH = 5_000;

/** `memory://`: everything in process; for tests and throwaway runs. */
export class MemoryBackend implements StoreBackend {
  readonly kind = 'memory' as const;
  private readonly keyvs = new Map<string, Keyv>();
  private readonly collections = new Map<string, MemoryCollection<unknown>>();
  private readonly counters = new Map<string, { value: number; expiresAt?: number }>();
  private logs: LogEntry[] = [];
  private logSeq = 0;
  private readonly seqOf = new WeakMap<LogEntry, number>();
  private readonly recent = new Map<string, { ids: string[]; expiresAt: number }>();
  /** spend-rollup.ts, by bucket id */
  private readonly buckets = new Map<string, SpendBucket>();

  /** the log has been trimmed once (the operator is told then, not at every trim) */
  private trimmed = false;

  /** no file to keep a key in: a random one per process, unless openStore was given a key */
  constructor(
    private readonly now: () => number = Date.now,
    readonly secretBox: SecretBox = SecretBox.ephemeral(),
    private readonly logger?: Logger,
  ) {}

  keyv(namespace: string): Keyv {
    let kv = this.keyvs.get(namespace);
    if (!kv) {
      kv = stampExpiry(new Keyv({ namespace }), this.now);
      this.keyvs.set(namespace, kv);
    }
    return kv;
  }

  collection<T>(name: string): Collection<T> {
    let c = this.collections.get(name);
    if (!c) {
      c = new MemoryCollection<unknown>();
      this.collections.set(name, c);
    }
    return c as Collection<T>;
  }

  async incrByFloat(key: string, amount: number, ttlMs?: number): Promise<number> {
    const now = this.now();
    let counter = this.counters.get(key);
    if (!counter || (counter.expiresAt !== undefined && counter.expiresAt <= now)) {
      counter = { value: 0, expiresAt: ttlMs ? now + ttlMs : undefined };
      this.counters.set(key, counter);
    }
    // floored at 0 like Redis: a refund larger than the count (it reached a counter that started again, or
    // came twice) would otherwise leave credit that lets the period spend past its limit
    counter.value = Math.max(0, counter.value + amount);
    return counter.value;
  }

  async getCounter(key: string): Promise<number> {
    const counter = this.counters.get(key);
    if (!counter || (counter.expiresAt !== undefined && counter.expiresAt <= this.now())) return 0;
    return counter.value;
  }

  async appendLog(entry: LogEntry): Promise<void> {
    return this.appendLogs([entry]);
  }

  /** synchronous, so the rows and their rollups are never seen apart */
  async appendLogs(entries: LogEntry[]): Promise<void> {
    for (const entry of entries) {
      // Entries are built for the log and never changed after they are recorded, so the hot path keeps
      // the object itself; readers get copies.
      this.seqOf.set(entry, ++this.logSeq);
      this.logs.push(entry);
    }
    if (this.logs.length >= MEMORY_LOG_ROWS + MEMORY_LOG_TRIM_BATCH) this.trimLog();
    for (const [id, b] of foldIntoBuckets(entries)) {
      const into = this.buckets.get(id);
      if (!into) {
        this.buckets.set(id, b);
        continue;
      }
      into.cost += b.cost;
      into.requests += b.requests;
      into.promptTokens += b.promptTokens;
      into.completionTokens += b.completionTokens;
    }
  }

  private trimLog(): void {
    this.logs = this.logs.slice(-MEMORY_LOG_ROWS);
    if (this.trimmed) return;
    this.trimmed = true;
    this.logger?.warn('memory:// request log full: older rows are dropped from now on (spend and budgets still count every request)', {
      keptRows: MEMORY_LOG_ROWS,
      keepEveryRow: 'store.url sqlite://PATH or postgres://…',
    });
  }

  async spendBuckets(since?: string, until?: string): Promise<SpendBucket[]> {
    return [...this.buckets.values()].filter((b) => (!since || b.hour >= since) && (!until || b.hour < until)).map((b) => ({ ...b }));
  }

  /** The log is in append order, close enough to time order: the oldest go from the front. */
  async sweepLogs(before: string, limit: number): Promise<number> {
    let n = 0;
    while (n < limit && n < this.logs.length && this.logs[n].time < before) n++;
    if (n) this.logs = this.logs.slice(n);
    return n;
  }

  async queryLogs(query: LogQuery): Promise<LogPage> {
    const before = query.cursor ? Number(query.cursor) : Infinity;
    const data: LogEntry[] = [];
    let nextCursor: string | null = null;
    for (let i = this.logs.length - 1; i >= 0; i--) {
      const entry = this.logs[i];
      const seq = this.seqOf.get(entry)!;
      if (seq >= before || !matchesLogQuery(entry, query)) continue;
      if (data.length === query.limit) {
        nextCursor = String(this.seqOf.get(data[data.length - 1]));
        break;
      }
      data.push(entry);
    }
    return { data: data.map((e) => structuredClone(e)), nextCursor };
  }

  async *scanLogs(since?: string): AsyncIterable<LogEntry> {
    for (const entry of this.logs) if (!since || entry.time >= since) yield entry;
  }

  async pushRecent(list: string, id: string, keep: number, ttlMs: number): Promise<string[]> {
    const now = this.now();
    let entry = this.recent.get(list);
    if (!entry || entry.expiresAt <= now) this.recent.set(list, (entry = { ids: [], expiresAt: 0 }));
    entry.ids.push(id);
    entry.expiresAt = now + ttlMs;
    return entry.ids.length > keep ? entry.ids.splice(0, entry.ids.length - keep) : [];
  }

  async sweepExpired(limit: number): Promise<number> {
    const now = this.now();
    let removed = 0;
    for (const kv of this.keyvs.values()) {
      const map = kv.store as Map<string, unknown>;
      for (const [key, raw] of map) {
        if (removed >= limit) return removed;
        if (keyvExpiry(raw) <= now) (map.delete(key), removed++);
      }
    }
    for (const [list, entry] of this.recent) {
      if (removed >= limit) return removed;
      if (entry.expiresAt <= now) (this.recent.delete(list), removed++);
    }
    for (const [key, counter] of this.counters) {
      if (removed >= limit) return removed;
      if (counter.expiresAt !== undefined && counter.expiresAt <= now) (this.counters.delete(key), removed++);
    }
    return removed;
  }

  async close(): Promise<void> {}
}
