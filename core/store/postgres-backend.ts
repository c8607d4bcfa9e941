import { createHash } from 'node:crypto';
import Keyv from 'keyv';
import pg from 'pg';
import type { LogEntry, LogPage, LogQuery } from './log-entry';
import { closedWithin } from './faults/bounded-close';
import { migrate } from './postgres-migrations';
import { NoSecretBox, type SecretBox } from './secrets/secret-box';
import { foldIntoBuckets, type SpendBucket } from './spend-rollup';
import { directStep, type Collection, type StoreBackend, type StoreStep } from './store-backend';

/** how many log rows one round trip of scanLogs reads */
const SCAN_PAGE = 1000;

/**
 * How long a query may go unanswered before its connection is given up. The store guard stops waiting
 * for a command long before (core/store/faults/store-guard.ts), but the query itself went on: on a
 * connection whose server vanished without a reset (a failover behind a virtual IP, a host gone hard) it
 * never settled, held its pool connection for good, and left the log writer waiting to know whether its
 * rows were written. With this limit it fails, its connection is closed and replaced, and the writer
 * retries. Longer than any query the gateway makes (a spend view over a million log rows takes seconds).
 */
export const QUERY_TIMEOUT_MS = 30_000;

/**
 * How long the digest of a written batch of log rows is kept (log_batches): a copy of the batch arriving
 * within it is not written again. A write the driver gave up on may still be committed by the server
 * (a statement waiting on a lock, a server thawing, a partition healing) long after the writer sent the
 * batch again. One row per batch: under load that is hundreds a second, so an hour, not more.
 */
const BATCH_DIGEST_TTL_MS = 3_600_000;

/**
 * PostgreSQL text cannot hold U+0000, and model or key names come from clients: in a column (not the
 * JSON, which escapes it) a NUL becomes U+FFFD, in writes and in filters alike, so a crafted name neither
 * loses a log row nor fails a query. Record ids and keyv keys too: a client names them in a path
 * (`/admin/v1/keys/a%00b`), and the refused query was a 503 that counted towards opening the store's breaker.
 */
const text = (value: string | null | undefined): string | null => (value == null ? null : value.includes('\0') ? value.replace(/\0/g, '\uFFFD') : value);

/** the longest value an indexed column of the log (or a rollup's bucket id) holds as it is, in UTF-16 units */
const INDEXED_MAX = 512;

/**
 * A value for an indexed column of the log (id, key, organisation, model) or a rollup's bucket id, in
 * writes and in filters alike. A B-tree entry holds at most 2704 bytes, and a model name comes from the
 * client: a request naming a model of a few kilobytes of random characters (or its bucket id) was refused
 * by the index, for good, and the log writer retried that batch, and every row behind it, for ever (no
 * request of any organisation was logged again until a restart). A longer value is kept as its first 400
 * units and the digest of the whole (well under the limit even in 3-byte characters), so a filter by it
 * still finds exactly its rows; the entry's JSON (what reads return) and the rollup's columns keep it whole.
 */
const indexed = (value: string | null | undefined): string | null => {
  const t = text(value);
  return t === null || t.length <= INDEXED_MAX ? t : `${t.slice(0, 400)}…${createHash('sha256').update(t).digest('base64url')}`;
};

/**
 * `postgres://USER:PASSWORD@HOST:PORT/DB`: records, the request log and spend rollups in tables, shared
 * by every gateway instance on the same database. The schema is migrated at boot (postgres-migrations.ts).
 * Expiry is decided by the gateway's clock, as on SQLite, so every backend sweeps alike.
 */
export class PostgresBackend implements StoreBackend {
  readonly kind = 'postgres' as const;
  private readonly keyvs = new Map<string, Keyv>();

  private constructor(
    readonly pool: pg.Pool,
    private readonly now: () => number,
    readonly secretBox: SecretBox,
  ) {}

  /** `secretBox` may be given as a function: it is then called once the server answers (see openStore). */
  static async connect(url: string, now: () => number = Date.now, secretBox: SecretBox | (() => SecretBox) = new NoSecretBox(), queryTimeoutMs = QUERY_TIMEOUT_MS, poolSize = 10): Promise<PostgresBackend> {
    // a server that cannot be reached fails the boot within seconds instead of hanging it; a query that
    // goes unanswered fails after queryTimeoutMs, and the pool closes its connection (pg-pool drops a
    // client released with an error); TCP keep-alive lets the OS notice a peer gone while idle
    const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 5000, max: poolSize, query_timeout: queryTimeoutMs, keepAlive: true });
    pool.on('error', () => {
      /* an idle connection lost: the pool replaces it, the next query reports a real failure */
    });
    let box: SecretBox;
    try {
      await migrate(pool);
      box = typeof secretBox === 'function' ? secretBox() : secretBox;
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return new PostgresBackend(pool, now, box);
  }

  keyv(namespace: string): Keyv {
    let kv = this.keyvs.get(namespace);
    if (!kv) {
      kv = new Keyv({ store: this.keyvAdapter(), namespace });
      this.keyvs.set(namespace, kv);
    }
    return kv;
  }

  /** A Map-like async store for keyv over the kv table; keyv handles serialisation and namespacing. */
  private keyvAdapter() {
    const { pool, now } = this;
    return {
      async get(key: string) {
        const { rows } = await pool.query<{ value: string; expires_at: string | null }>('SELECT value, expires_at FROM kv WHERE key = $1', [text(key)]);
        const row = rows[0];
        if (!row) return undefined;
        if (row.expires_at !== null && Number(row.expires_at) <= now()) {
          // as on SQLite: an expired value read is deleted (unless rewritten meanwhile)
          await pool.query('DELETE FROM kv WHERE key = $1 AND expires_at <= $2', [text(key), now()]);
          return undefined;
        }
        return row.value;
      },
      async set(key: string, value: string, ttl?: number) {
        await pool.query('INSERT INTO kv (key, value, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at', [text(key), value, ttl ? now() + ttl : null]);
        return true;
      },
      async delete(key: string) {
        return ((await pool.query('DELETE FROM kv WHERE key = $1', [text(key)])).rowCount ?? 0) > 0;
      },
      async clear() {
        await pool.query('DELETE FROM kv');
      },
      async has(key: string) {
        return (await this.get(key)) !== undefined;
      },
    };
  }

  collection<T>(name: string): Collection<T> {
    const { pool } = this;
    return {
      async get(id) {
        const { rows } = await pool.query<{ value: string }>('SELECT value FROM records WHERE collection = $1 AND id = $2', [name, text(id)]);
        return rows[0] ? (JSON.parse(rows[0].value) as T) : undefined;
      },
      async set(id, value) {
        await pool.query('INSERT INTO records (collection, id, value) VALUES ($1, $2, $3) ON CONFLICT (collection, id) DO UPDATE SET value = excluded.value', [name, text(id), JSON.stringify(value)]);
      },
      async delete(id) {
        return ((await pool.query('DELETE FROM records WHERE collection = $1 AND id = $2', [name, text(id)])).rowCount ?? 0) > 0;
      },
      async all() {
        const { rows } = await pool.query<{ value: string }>('SELECT value FROM records WHERE collection = $1 ORDER BY seq', [name]);
        return rows.map((r) => JSON.parse(r.value) as T);
      },
      async replace(id, expected, next) {
        const r = await pool.query('UPDATE records SET value = $1 WHERE collection = $2 AND id = $3 AND value = $4', [JSON.stringify(next), name, text(id), JSON.stringify(expected)]);
        return (r.rowCount ?? 0) > 0;
      },
      async entries() {
        const { rows } = await pool.query<{ id: string; value: string }>('SELECT id, value FROM records WHERE collection = $1 ORDER BY seq', [name]);
        return rows.map((r) => [r.id, JSON.parse(r.value) as T] as [string, T]);
      },
    };
  }

  /**
   * One upsert: the row lock makes it atomic across instances; an expired counter starts again from 0.
   * Floored at 0 like Redis, in the same statement: a refund larger than the count (it reached a counter
   * that started again, or came twice) would otherwise leave credit that lets the period spend past its
   * limit. The addition reads $2, not excluded.value, which is already floored.
   */
  async incrByFloat(key: string, amount: number, ttlMs?: number): Promise<number> {
    const t = this.now();
    const { rows } = await this.pool.query<{ value: number }>(
      `INSERT INTO counters AS c (key, value, expires_at) VALUES ($1, GREATEST($2::double precision, 0), $3)
       ON CONFLICT (key) DO UPDATE SET
         value = CASE WHEN c.expires_at IS NULL OR c.expires_at > $4 THEN GREATEST(c.value + $2::double precision, 0) ELSE excluded.value END,
         expires_at = CASE WHEN c.expires_at IS NULL OR c.expires_at > $4 THEN c.expires_at ELSE excluded.expires_at END
       RETURNING value`,
      [key, amount, ttlMs ? t + ttlMs : null, t],
    );
    return rows[0].value;
  }

  async getCounter(key: string): Promise<number> {
    const { rows } = await this.pool.query<{ value: number }>('SELECT value FROM counters WHERE key = $1 AND (expires_at IS NULL OR expires_at > $2)', [key, this.now()]);
    return rows[0]?.value ?? 0;
  }

  async appendLog(entry: LogEntry): Promise<void> {
    return this.appendLogs([entry]);
  }

  /**
   * The rows and their rollups in ONE statement (so one transaction and one round trip, whatever the
   * batch size): a multi-row insert into the log from arrays, and a multi-row upsert of the batch's
   * buckets. Buckets go in a fixed order, so two instances adding to the same ones never deadlock.
   *
   * The statement first records the batch's digest (log_batches) and writes nothing when it is there: the
   * log writer sends a batch again once the driver gave up on a write (QUERY_TIMEOUT_MS), but the server
   * may still commit that write (it waited on a lock, or the server was frozen), and both copies of every
   * row and its spend were kept. A copy sent while the first is still running waits for it on the digest's
   * unique index, and writes only if it was rolled back.
   */
  async appendLogs(entries: LogEntry[]): Promise<void> {
    if (!entries.length) return;
    const buckets = [...foldIntoBuckets(entries)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const col = <T>(rows: T[], f: (row: T) => unknown) => rows.map(f);
    const b = buckets.map(([, bucket]) => bucket);
    const json = entries.map((e) => JSON.stringify(e));
    const digest = createHash('sha256');
    for (const row of json) digest.update(row).update('\n');
    await this.pool.query(
      `WITH batch AS (
         INSERT INTO log_batches (digest, expires_at) VALUES ($18, $19) ON CONFLICT (digest) DO NOTHING RETURNING digest
       ), logged AS (
         INSERT INTO logs (id, time, key_id, org, model, status, entry)
         SELECT id, time, key_id, org, model, status, entry
         FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[]) WITH ORDINALITY
           AS e(id, time, key_id, org, model, status, entry, n)
         WHERE EXISTS (SELECT 1 FROM batch)
         ORDER BY n
       )
       INSERT INTO spend_rollup AS s (bucket, hour, key_id, org, model, deployment_id, cost, requests, prompt_tokens, completion_tokens)
       SELECT * FROM unnest($8::text[], $9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::float8[], $15::bigint[], $16::bigint[], $17::bigint[])
       WHERE EXISTS (SELECT 1 FROM batch)
       ON CONFLICT (bucket) DO UPDATE SET
         cost = s.cost + excluded.cost,
         requests = s.requests + excluded.requests,
         prompt_tokens = s.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = s.completion_tokens + excluded.completion_tokens`,
      [
        col(entries, (e) => indexed(e.id)),
        col(entries, (e) => e.time),
        col(entries, (e) => indexed(e.keyId)),
        col(entries, (e) => indexed(e.org)),
        col(entries, (e) => indexed(e.model)),
        col(entries, (e) => e.status),
        json,
        buckets.map(([id]) => indexed(id)),
        col(b, (r) => r.hour),
        col(b, (r) => text(r.keyId)),
        col(b, (r) => text(r.org)),
        col(b, (r) => text(r.model)),
        col(b, (r) => text(r.deploymentId)),
        col(b, (r) => r.cost),
        col(b, (r) => r.requests),
        col(b, (r) => r.promptTokens),
        col(b, (r) => r.completionTokens),
        digest.digest('base64url'),
        this.now() + BATCH_DIGEST_TTL_MS,
      ],
    );
  }

  async queryLogs(query: LogQuery, step: StoreStep = directStep): Promise<LogPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (query.cursor) add('seq < ?', query.cursor);
    if (query.key) add('key_id = ?', indexed(query.key));
    if (query.org) add('org = ?', indexed(query.org));
    if (query.model) add('model = ?', indexed(query.model));
    if (query.since) add('time >= ?', query.since);
    if (query.until) add('time < ?', query.until);
    if (query.statusMin !== undefined) add('status >= ?', query.statusMin);
    if (query.statusMax !== undefined) add('status <= ?', query.statusMax);
    if (query.id) add('id = ?', indexed(query.id));
    params.push(query.limit + 1);
    const sql = `SELECT seq, entry FROM logs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${params.length}`;
    const { rows } = await step(() => this.pool.query<{ seq: string; entry: string }>(sql, params));
    const page = rows.slice(0, query.limit);
    return {
      data: page.map((r) => JSON.parse(r.entry) as LogEntry),
      nextCursor: rows.length > query.limit ? String(page[page.length - 1].seq) : null,
    };
  }

  /** page by page (keyset on seq), so a long log is never held whole in memory */
  async *scanLogs(since?: string): AsyncIterable<LogEntry> {
    let after = '0';
    for (;;) {
      const { rows } = await this.pool.query<{ seq: string; entry: string }>(
        `SELECT seq, entry FROM logs WHERE seq > $1 ${since ? 'AND time >= $3' : ''} ORDER BY seq LIMIT $2`,
        since ? [after, SCAN_PAGE, since] : [after, SCAN_PAGE],
      );
      for (const r of rows) yield JSON.parse(r.entry) as LogEntry;
      if (rows.length < SCAN_PAGE) return;
      after = rows[rows.length - 1].seq;
    }
  }

  async spendBuckets(since?: string, until?: string, step: StoreStep = directStep): Promise<SpendBucket[]> {
    const { rows } = await step(() => this.pool.query<{ hour: Date; key_id: string | null; org: string | null; model: string | null; deployment_id: string | null; cost: number; requests: string; prompt_tokens: string; completion_tokens: string }>(
      `SELECT hour, key_id, org, model, deployment_id, cost, requests, prompt_tokens, completion_tokens FROM spend_rollup
       WHERE ($1::timestamptz IS NULL OR hour >= $1) AND ($2::timestamptz IS NULL OR hour < $2)`,
      [since ?? null, until ?? null],
    ));
    return rows.map((r) => ({
      hour: r.hour.toISOString(),
      keyId: r.key_id,
      org: r.org,
      model: r.model,
      deploymentId: r.deployment_id,
      cost: r.cost,
      requests: Number(r.requests),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
    }));
  }

  async sweepLogs(before: string, limit: number): Promise<number> {
    const r = await this.pool.query('DELETE FROM logs WHERE seq IN (SELECT seq FROM logs WHERE time < $1 ORDER BY time LIMIT $2)', [before, limit]);
    return r.rowCount ?? 0;
  }

  /** The row is locked for the read-append-write, so concurrent appends (any instance) never lose an id. */
  async pushRecent(list: string, id: string, keep: number, ttlMs: number): Promise<string[]> {
    const client = await this.pool.connect();
    let failure: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO recent (list, ids, expires_at) VALUES ($1, '[]', 0) ON CONFLICT (list) DO NOTHING", [list]);
      const { rows } = await client.query<{ ids: string; expires_at: string }>('SELECT ids, expires_at FROM recent WHERE list = $1 FOR UPDATE', [list]);
      const t = this.now();
      const ids = Number(rows[0].expires_at) > t ? (JSON.parse(rows[0].ids) as string[]) : [];
      ids.push(id);
      const dropped = ids.length > keep ? ids.splice(0, ids.length - keep) : [];
      await client.query('UPDATE recent SET ids = $2, expires_at = $3 WHERE list = $1', [list, JSON.stringify(ids), t + ttlMs]);
      await client.query('COMMIT');
      return dropped;
    } catch (err) {
      failure = err as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // released with the error, the client is closed rather than pooled: after a timeout it may be dead
      client.release(failure);
    }
  }

  async sweepExpired(limit: number): Promise<number> {
    const t = this.now();
    let removed = 0;
    // values first (responses, hosted images: the big ones), then recent lists and spent counters. The
    // DELETE checks the expiry again on the row it reaches: one written again after the inner SELECT read
    // it (a rate limit's next window starting on its counter, whose row lock the DELETE waited for) is
    // live, and was deleted with its new count.
    for (const [table, key] of [['kv', 'key'], ['recent', 'list'], ['counters', 'key']]) {
      if (removed >= limit) break;
      const r = await this.pool.query(`DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2) AND expires_at <= $1`, [t, limit - removed]);
      removed += r.rowCount ?? 0;
    }
    // the digests of log batches written an hour ago, all at once: a batch a turn under load outruns
    // batches of 500 a minute, and these are small rows nobody reads
    removed += (await this.pool.query('DELETE FROM log_batches WHERE expires_at <= $1', [t])).rowCount ?? 0;
    return removed;
  }

  async close(): Promise<void> {
    // the pool waits for its queries, which a frozen server leaves unanswered for QUERY_TIMEOUT_MS
    await closedWithin(this.pool.end());
  }
}
