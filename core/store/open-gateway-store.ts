import cluster from 'node:cluster';
import type { ResolvedConfig } from '../config/types';
import { ConfigError } from '../errors/gateway-error';
import { InstanceEvents, type ChangeEvents } from './events/change-events';
import { LocalChangeEvents } from './events/local-change-events';
import { ClusterChangeEvents } from './events/cluster-change-events';
import { guardBackend } from './faults/guarded-backend';
import { StoreGuard } from './faults/store-guard';
import { openStore, type OpenStoreOptions } from './open-store';
import { connectionLimitHint, postgresConnections } from './postgres-pool-size';
import { splitBackend } from './split-backend';
import type { StoreBackend } from './store-backend';

export interface GatewayStore {
  /** every command bounded by a guard: `guard` for `store.url`, one of its own for Redis beside it */
  backend: StoreBackend;
  guard: StoreGuard;
  /** changes to and from the other instances on the same store */
  events: InstanceEvents;
  close(): Promise<void>;
}

/** In-process events per backend object: gateways built on one shared backend (tests, one process) share them. */
const localEvents = new WeakMap<StoreBackend, LocalChangeEvents>();

/**
 * The store one gateway instance works on: the records backend (`store.url`), Redis beside it when
 * `store.redis` names one, a fault guard over each, and the events between instances (Redis pub/sub
 * when there is a Redis, PostgreSQL LISTEN/NOTIFY on a PostgreSQL store without one, else in-process). `shared`: a backend opened by the caller (tests), not closed here.
 */
export async function openGatewayStore(settings: ResolvedConfig['store'], now: () => number, options: OpenStoreOptions & { shared?: StoreBackend; processes?: number } = {}): Promise<GatewayStore> {
  const opened: StoreBackend[] = [];
  let events: ChangeEvents | undefined;
  try {
    const processes = options.processes ?? 1;
    const connections = options.shared ? undefined : postgresConnections(settings, processes);
    const limitHint = connections && connectionLimitHint(connections, settings.maxConnections, processes);
    const records = options.shared ?? (await openStore(settings.url, now, { ...options, poolSize: connections?.pool, connectionLimitHint: limitHint }));
    if (!options.shared) opened.push(records);
    const guard = new StoreGuard({ timeoutMs: settings.timeoutMs });
    let backend: StoreBackend = guardBackend(records, guard);
    if (settings.redis) {
      const fast = await openStore(settings.redis, now, { ...options, secretBox: records.secretBox }).catch((err) => {
        throw new ConfigError('store.redis', (err as Error).message.replace(/^store\.url: /, ''));
      });
      opened.push(fast);
      // a breaker each: with one for both, a burst of Redis timeouts refused the database's commands too
      // (key lookups, the management API, log rows) though it answered, and its answers kept the breaker
      // from opening for a Redis that was down
      backend = splitBackend(backend, guardBackend(fast, new StoreGuard({ timeoutMs: settings.timeoutMs })));
    }
    const redisUrl = options.shared ? undefined : (settings.redis ?? (/^rediss?:\/\//.test(settings.url) ? settings.url : undefined));
    const postgresUrl = options.shared || redisUrl ? undefined : /^postgres(ql)?:\/\//.test(settings.url) ? settings.url : undefined;
    const onHandlerError = (err: unknown) => options.logger?.error('change event handler failed', { error: (err as Error).message });
    // the pg and Redis clients are required only when their store is in use (see open-store.ts)
    if (redisUrl) {
      const { RedisChangeEvents } = require('./events/redis-change-events') as typeof import('./events/redis-change-events');
      events = await RedisChangeEvents.connect(redisUrl, { timeoutMs: settings.timeoutMs, onHandlerError });
    } else if (postgresUrl) {
      // no Redis: PostgreSQL's own LISTEN/NOTIFY carries the events
      const { PostgresChangeEvents } = require('./events/postgres-change-events') as typeof import('./events/postgres-change-events');
      events = await PostgresChangeEvents.connect(postgresUrl, { timeoutMs: settings.timeoutMs, onHandlerError }).catch((err) => {
        throw new ConfigError('store.url', `cannot listen for change events: ${(err as Error).message}${limitHint?.(err) ?? ''}`);
      });
    } else if (!options.shared && cluster.isWorker && process.send) {
      // a `--workers N` worker on SQLite or memory: the primary relays its events to its siblings (core/cli/cluster.ts)
      events = new ClusterChangeEvents(process, onHandlerError);
    } else {
      let local = localEvents.get(records);
      if (!local) localEvents.set(records, (local = new LocalChangeEvents()));
      events = local;
    }
    const ownEvents = localEvents.get(records) === events ? undefined : events;
    const instanceEvents = new InstanceEvents(events);
    return {
      backend,
      guard,
      events: instanceEvents,
      async close() {
        await instanceEvents.close();
        await ownEvents?.close();
        await Promise.allSettled(opened.map((b) => b.close()));
      },
    };
  } catch (err) {
    await Promise.allSettled(opened.map((b) => b.close()));
    throw err;
  }
}
