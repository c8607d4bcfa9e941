import type { Collection, StoreBackend } from '../store/store-backend';
import type { GatewayMetrics } from './metrics';

/**
 * The same store with every asynchronous call timed and every failure counted
 * (gateway_store_operation_duration_seconds and gateway_store_failures_total, labelled with the method
 * name: a fixed set). Collections are timed as `collection.<method>`. Iterators (a log scan) and the keyv
 * namespaces plugins use pass through untimed.
 */
export function timedStore(store: StoreBackend, metrics: GatewayMetrics): StoreBackend {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (property === 'collection') return (name: string) => timedCollection(target.collection(name), metrics);
      return (...args: unknown[]) => timed(metrics, property, () => value.apply(target, args));
    },
  });
}

function timedCollection<T>(collection: Collection<T>, metrics: GatewayMetrics): Collection<T> {
  return new Proxy(collection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => timed(metrics, `collection.${property}`, () => value.apply(target, args));
    },
  });
}

/** Time `call` when it returns a promise; anything else (an iterator, a keyv instance) is returned as is. */
function timed(metrics: GatewayMetrics, operation: string, call: () => unknown): unknown {
  const start = process.hrtime.bigint();
  const result = call();
  if (!(result instanceof Promise)) return result;
  return result.then(
    (value) => {
      metrics.storeDuration.observe({ operation }, Number(process.hrtime.bigint() - start) / 1e9);
      return value;
    },
    (err: unknown) => {
      metrics.storeDuration.observe({ operation }, Number(process.hrtime.bigint() - start) / 1e9);
      metrics.storeFailures.inc({ operation });
      throw err;
    },
  );
}
