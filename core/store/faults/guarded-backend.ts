import type Keyv from 'keyv';
import type { Collection, StoreBackend } from '../store-backend';
import type { StoreGuard } from './store-guard';

/** keyv methods that reach the store; the rest (events, options, iterator helpers) pass through. */
const KEYV_COMMANDS: ReadonlySet<PropertyKey> = new Set(['get', 'getMany', 'getRaw', 'getManyRaw', 'set', 'setMany', 'delete', 'deleteMany', 'has', 'hasMany', 'clear']);

/**
 * Any backend behind one StoreGuard: every command gets the guard's timeout and breaker, so the layers
 * above see either an answer or a StoreUnavailableError within `timeoutMs`, whatever the backend is.
 */
export function guardBackend(backend: StoreBackend, guard: StoreGuard): StoreBackend & { readonly guard: StoreGuard } {
  const run = <T>(command: () => Promise<T>) => guard.run(command);
  const keyvs = new Map<string, Keyv>();
  const commands: StoreBackend & { readonly guard: StoreGuard } = {
    guard,
    get kind() {
      return backend.kind;
    },
    get secretBox() {
      return backend.secretBox;
    },
    keyv(namespace) {
      let kv = keyvs.get(namespace);
      if (!kv) {
        kv = guardKeyv(backend.keyv(namespace), run);
        keyvs.set(namespace, kv);
      }
      return kv;
    },
    collection<T>(name: string): Collection<T> {
      const c = backend.collection<T>(name);
      return {
        get: (id) => run(() => c.get(id)),
        set: (id, value) => run(() => c.set(id, value)),
        delete: (id) => run(() => c.delete(id)),
        all: () => run(() => c.all()),
        entries: () => run(() => c.entries()),
        replace: (id, expected, next) => run(() => c.replace(id, expected, next)),
      };
    },
    incrByFloat: (key, amount, ttlMs) => run(() => backend.incrByFloat(key, amount, ttlMs)),
    getCounter: (key) => run(() => backend.getCounter(key)),
    appendLog: (entry) => run(() => backend.appendLog(entry)),
    appendLogs: (entries) => run(() => backend.appendLogs(entries)),
    // a log query reads many rows where no index serves its filter (most of a long log, 500 rows a read
    // on Redis): each read gets the timeout; the whole of it took 260 ms over 100,000 rows on Redis, and
    // such a query answered 503 store_unavailable and counted towards opening the breaker
    queryLogs: (query) => backend.queryLogs(query, run),
    scanLogs: (since) => guardIterable(backend.scanLogs(since), run),
    // the same for the spend rollups: 30 days of 100 keys are 72,000 rows, 450 ms to read from Redis
    spendBuckets: (since, until) => backend.spendBuckets(since, until, run),
    sweepLogs: (before, limit) => run(() => backend.sweepLogs(before, limit)),
    pushRecent: (list, id, keep, ttlMs) => run(() => backend.pushRecent(list, id, keep, ttlMs)),
    sweepExpired: (limit) => run(() => backend.sweepExpired(limit)),
    close: () => backend.close(),
  };
  // What is not a store command (a backend's own extras, such as the SQLite handle tests read) stays
  // reachable through the prototype; every StoreBackend command above is guarded.
  return Object.create(backend, Object.getOwnPropertyDescriptors(commands)) as StoreBackend & { readonly guard: StoreGuard };
}

/** The same keyv, its store commands through the guard (keyv must throw store errors: throwOnErrors). */
function guardKeyv(kv: Keyv, run: <T>(command: () => Promise<T>) => Promise<T>): Keyv {
  kv.throwOnErrors = true;
  return new Proxy(kv, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || !KEYV_COMMANDS.has(prop)) return value;
      return (...args: unknown[]) => run(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

/** Each step of a scan through the guard: a store that stops answering mid-scan ends it with the error. */
function guardIterable<T>(source: AsyncIterable<T>, run: <R>(command: () => Promise<R>) => Promise<R>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        next: () => run(() => it.next()),
        return: async (value?: unknown) => (it.return ? it.return(value) : { done: true as const, value: value as T }),
      };
    },
  };
}
