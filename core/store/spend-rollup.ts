/**
 * Spend as a rollup, not a scan: every log entry a store writes also adds to one aggregate row per hour
 * and (key, organisation, model, deployment), in the same transaction (SQLite, PostgreSQL) or MULTI
 * (Redis). Spend views read these rows, so their cost grows with the number of hours and combinations in
 * the range, never with the number of requests, and the rows outlive the log's retention window.
 *
 * Hours rather than days: the daily usage view cuts days in any time zone, and every whole-hour zone's
 * midnight falls on an hour boundary.
 */
import type { LogEntry } from './log-entry';

export interface SpendBucket {
  /** ISO start of the UTC hour, e.g. 2026-01-01T13:00:00.000Z */
  hour: string;
  keyId: string | null;
  org: string | null;
  model: string | null;
  deploymentId: string | null;
  cost: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

const HOUR_MS = 3_600_000;

/** A time as Date#toISOString writes it (every log entry's time): its hour is its first 13 characters. */
const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The ISO start of the hour an ISO time falls in. */
export function hourOf(time: string): string {
  // per log row: cut the string rather than parse and print a Date (same result for a canonical time)
  if (CANONICAL_ISO.test(time)) return `${time.slice(0, 13)}:00:00.000Z`;
  const t = Date.parse(time);
  return new Date(Math.floor(t / HOUR_MS) * HOUR_MS).toISOString();
}

/** The first hour boundary at or after an ISO time. */
export function hourCeil(time: string): string {
  const t = Date.parse(time);
  return new Date(Math.ceil(t / HOUR_MS) * HOUR_MS).toISOString();
}

/** The identity of a bucket: one string, so every backend can key it (a NULL never equals a NULL in SQL). */
export function bucketId(b: Pick<SpendBucket, 'hour' | 'keyId' | 'org' | 'model' | 'deploymentId'>): string {
  return JSON.stringify([b.hour, b.keyId, b.org, b.model, b.deploymentId]);
}

/**
 * A batch of entries folded into its buckets, so a batch of 50 requests of one key and model is one row
 * to add (and PostgreSQL's multi-row upsert never meets the same row twice).
 */
export function foldIntoBuckets(entries: LogEntry[]): Map<string, SpendBucket> {
  const buckets = new Map<string, SpendBucket>();
  for (const e of entries) {
    const b: SpendBucket = { hour: hourOf(e.time), keyId: e.keyId ?? null, org: e.org ?? null, model: e.model ?? null, deploymentId: e.deploymentId ?? null, cost: 0, requests: 0, promptTokens: 0, completionTokens: 0 };
    const id = bucketId(b);
    const into = buckets.get(id) ?? b;
    into.cost += e.cost;
    into.requests += 1;
    into.promptTokens += tokenCount(e.promptTokens);
    into.completionTokens += tokenCount(e.completionTokens);
    buckets.set(id, into);
  }
  return buckets;
}

/**
 * A token count as the rollups keep it: a whole number. The counts are an upstream's (`prompt_tokens`
 * 10.5, or 1e999 read as Infinity): PostgreSQL refused such a batch as a bigint for good, and the log
 * writer retried it, and every row behind it, for ever; Redis refused the HINCRBY after the MULTI had
 * pushed the rows, and each retry pushed them, and their spend, again.
 *
 * At most MAX_TOKENS: a finite count past a 64-bit integer (`prompt_tokens` 1e20) was refused the same
 * way. A billion is a thousand times any context window, and sums of such counts stay far within a
 * bigint (and exact as a JS number) whatever an hour's bucket adds up.
 */
function tokenCount(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.min(Math.round(n), MAX_TOKENS) : 0;
}

/** the most tokens one log row adds to a rollup */
const MAX_TOKENS = 1_000_000_000;
