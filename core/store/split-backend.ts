import type Keyv from 'keyv';
import type { StoreBackend } from './store-backend';

/**
 * Records in a database, fast shared state in Redis (`store: { url, redis }`): the counters behind rate
 * limits and budgets (atomic INCRBYFLOAT on Redis) and the plugins' key-value caches go to `fast`;
 * everything that is a record (keys and their digest index, organisations, MCP servers, tool states,
 * stored responses and their per-owner lists, hosted images, the request log) stays in `records`, which
 * keeps the secret key ring too.
 */
export function splitBackend(records: StoreBackend, fast: StoreBackend): StoreBackend {
  const isCache = (namespace: string) => namespace.startsWith('plugin:');
  return {
    get kind() {
      return records.kind;
    },
    get secretBox() {
      return records.secretBox;
    },
    keyv: (namespace): Keyv => (isCache(namespace) ? fast : records).keyv(namespace),
    collection: (name) => records.collection(name),
    incrByFloat: (key, amount, ttlMs) => fast.incrByFloat(key, amount, ttlMs),
    getCounter: (key) => fast.getCounter(key),
    appendLog: (entry) => records.appendLog(entry),
    appendLogs: (entries) => records.appendLogs(entries),
    queryLogs: (query, step) => records.queryLogs(query, step),
    scanLogs: (since) => records.scanLogs(since),
    spendBuckets: (since, until, step) => records.spendBuckets(since, until, step),
    sweepLogs: (before, limit) => records.sweepLogs(before, limit),
    pushRecent: (list, id, keep, ttlMs) => records.pushRecent(list, id, keep, ttlMs),
    async sweepExpired(limit) {
      return (await records.sweepExpired(limit)) + (await fast.sweepExpired(limit));
    },
    async close() {
      await Promise.allSettled([records.close(), fast.close()]);
    },
  };
}
