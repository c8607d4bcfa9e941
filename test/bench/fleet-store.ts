import { startPostgres } from '../support/postgres-server';
import { startRedis } from '../support/redis-server';

/**
 * The fleet store for the bench (issue 13): a PostgreSQL database for the durable state and a
 * redis-server for counters, started with the test suite's helpers. The bench is not a test, so a
 * server that cannot start is a reason to skip this target, not an error.
 */
export interface FleetStore {
  store?: { url: string; redis: string };
  reason?: string;
  stop?: () => Promise<void>;
}

export async function startFleetStore(): Promise<FleetStore> {
  let url: string;
  try {
    // the PostgreSQL helper stops its server when this process exits
    url = await (await startPostgres()).createDatabase();
  } catch (err) {
    return { reason: `PostgreSQL could not start: ${(err as Error).message.split('\n')[0]}` };
  }
  try {
    const redis = await startRedis();
    return { store: { url, redis: redis.url }, stop: () => redis.stop() };
  } catch (err) {
    return { reason: `redis-server could not start: ${(err as Error).message.split('\n')[0]}` };
  }
}
