import type { ResolvedConfig } from '../config/types';
import { ConfigError } from '../errors/gateway-error';

/** one process's query connections at most, however many `store.maxConnections` would allow */
const MAX_POOL = 10;

export interface PostgresConnections {
  /** the query pool of each process */
  pool: number;
  /** every process's connections together, change events included */
  total: number;
}

/**
 * How many connections to PostgreSQL each gateway process opens. `store.maxConnections` counts the whole
 * gateway's, all its `--workers` together: each worker opened 13 whatever their number, so `--workers
 * auto` on a host with 8 cores or more could pass PostgreSQL's default max_connections (100) under load,
 * and the connections the server refused failed requests. Each process takes an equal share: one
 * connection listens for change events and one publishes them (none when Redis carries the events), the
 * rest run queries, up to 10. `undefined`: the store is not PostgreSQL.
 */
export function postgresConnections(settings: Pick<ResolvedConfig['store'], 'url' | 'redis' | 'maxConnections'>, processes: number): PostgresConnections | undefined {
  if (!/^postgres(ql)?:\/\//.test(settings.url)) return undefined;
  const events = settings.redis ? 0 : 2;
  const pool = Math.min(MAX_POOL, Math.floor(settings.maxConnections / processes) - events);
  if (pool < 1) {
    const each = events + 1;
    const needs = events ? `${each} (one listens for change events, one publishes them, one runs queries)` : '1';
    throw new ConfigError(
      'store.maxConnections',
      `${settings.maxConnections} PostgreSQL connections cannot serve ${processes} gateway processes: each needs at least ${needs}; set it to ${each * processes} or more (within the server's max_connections), or run fewer --workers`,
    );
  }
  return { pool, total: (pool + events) * processes };
}

/**
 * What a boot error adds when the server refused a connection for its limit (SQLSTATE 53300: its
 * max_connections, or a role's or database's CONNECTION LIMIT): the setting that decides how many this
 * gateway opens, rather than the server's words alone.
 */
export function connectionLimitHint(connections: PostgresConnections, maxConnections: number, processes: number): (err: unknown) => string | undefined {
  return (err) =>
    (err as { code?: unknown } | undefined)?.code === '53300'
      ? ` (the server's connection limit is below the ${connections.total} connections this gateway may open: store.maxConnections is ${maxConnections}${processes > 1 ? `, shared by ${processes} workers` : ''}; lower it, or raise the server's max_connections)`
      : undefined;
}
