/**
 * The PostgreSQL store's schema, as numbered migrations run at boot. Each runs once (schema_migrations
 * records it), in its own transaction with the others, under a transaction-level advisory lock: several
 * gateway instances starting at once queue on the lock, and each one after the first finds nothing left
 * to do. Migrations are append-only: a released one is never edited, a change is a new number.
 */
import type pg from 'pg';

/** Any fixed 64-bit number, the same in every instance: the lock's name. */
const MIGRATION_LOCK = 0x6d67_7374_6f72_65n; // "mgstore"

export const MIGRATIONS: { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at BIGINT);
      CREATE INDEX kv_expires ON kv (expires_at) WHERE expires_at IS NOT NULL;
      -- seq keeps insertion order for all(), as SQLite's rowid does
      CREATE TABLE records (collection TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, seq BIGSERIAL, PRIMARY KEY (collection, id));
      CREATE TABLE counters (key TEXT PRIMARY KEY, value DOUBLE PRECISION NOT NULL, expires_at BIGINT);
      CREATE INDEX counters_expires ON counters (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE recent (list TEXT PRIMARY KEY, ids TEXT NOT NULL, expires_at BIGINT NOT NULL);
      CREATE INDEX recent_expires ON recent (expires_at);
      -- append-only; the columns beside the JSON are the /admin/v1/logs filters, newest first (seq DESC)
      CREATE TABLE logs (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL,
        time TIMESTAMPTZ NOT NULL,
        key_id TEXT,
        org TEXT,
        model TEXT,
        status INTEGER NOT NULL,
        entry TEXT NOT NULL
      );
      CREATE INDEX logs_time ON logs (time);
      CREATE INDEX logs_id ON logs (id);
      CREATE INDEX logs_key ON logs (key_id, seq);
      CREATE INDEX logs_org ON logs (org, seq);
      CREATE INDEX logs_model ON logs (model, seq);
      CREATE INDEX logs_status ON logs (status, seq);
      -- spend-rollup.ts: one row per hour and (key, org, model, deployment)
      CREATE TABLE spend_rollup (
        bucket TEXT PRIMARY KEY,
        hour TIMESTAMPTZ NOT NULL,
        key_id TEXT,
        org TEXT,
        model TEXT,
        deployment_id TEXT,
        cost DOUBLE PRECISION NOT NULL,
        requests BIGINT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL
      );
      CREATE INDEX spend_rollup_hour ON spend_rollup (hour);
    `,
  },
  {
    version: 2,
    sql: `
      -- postgres-backend.ts appendLogs: one row per batch of log rows written, so a batch sent again after
      -- a write whose outcome the gateway never learned is written once
      CREATE TABLE log_batches (digest TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
      CREATE INDEX log_batches_expires ON log_batches (expires_at);
    `,
  },
];

/** Bring the database to the newest schema; returns the versions this call applied. */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
