import { roundCost } from '../spend/pricing';
import { orgKeyId } from '../auth/org-key-id';
import type { LogEntry, LogPage, LogQuery } from './log-entry';
import type { StoreBackend } from './store-backend';
import { hourCeil, hourOf, type SpendBucket } from './spend-rollup';
import type { Logger } from '../plugins/contracts';
import { LogWriter, type LogWriterOptions } from './log-writer';

export interface SpendRow {
  group: string;
  /** grouped by key: the key's organisation (a config key's id is unique only within it) */
  org?: string | null;
  cost: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The request log and spend views. Writes are fire-and-forget from the request's point of view: a slow
 * store never delays a response, and a failed write is kept and retried by the writer (log-writer.ts),
 * never thrown at the client.
 */
export class RequestLog {
  /** batches, queues and retries the writes; its counters are the log's metrics */
  readonly writer: LogWriter;

  constructor(private readonly store: StoreBackend, logger: Logger, writerOptions?: LogWriterOptions) {
    this.writer = new LogWriter(store, logger, writerOptions);
  }

  record(entry: LogEntry): Promise<void> {
    // every stored cost is rounded to 1e-10 USD, whatever summed it (responses rounds, tool fees); the
    // spend stage hands in rounded costs, so the entry is copied only when it is not
    const cost = roundCost(entry.cost);
    return this.writer.write(cost === entry.cost ? entry : { ...entry, cost });
  }

  async query(query: LogQuery): Promise<LogPage> {
    await this.writer.settled();
    return this.store.queryLogs(query);
  }

  /** every entry in [since, until), oldest first (the store scans from `since`; `until` is checked here) */
  async *scan(since?: string, until?: string): AsyncIterable<LogEntry> {
    await this.writer.settled();
    for await (const e of this.store.scanLogs(since)) if (!until || e.time < until) yield e;
  }

  /**
   * The spend rollup rows of [since, until), rounded outward to whole hours (the rollup's grain), of one
   * organisation or all. Their number grows with hours and (key, org, model, deployment) combinations,
   * never with requests, and they outlive the log's retention.
   */
  async buckets(since?: string, until?: string, org?: string): Promise<SpendBucket[]> {
    await this.writer.settled();
    const rows = await this.store.spendBuckets(since && hourOf(since), until && hourCeil(until));
    return org ? rows.filter((b) => b.org === org) : rows;
  }

  async spend(groupBy: 'key' | 'org' | 'model' | 'day', since?: string, org?: string, until?: string): Promise<SpendRow[]> {
    const rows = new Map<string, SpendRow>();
    for (const b of await this.buckets(since, until, org)) {
      const group = groupKey(b, groupBy);
      // two organisations may each have a config key `bot`: one row for both summed their spend
      const id = groupBy === 'key' ? orgKeyId(b.org, group) : group;
      const row = rows.get(id) ?? { group, ...(groupBy === 'key' ? { org: b.org } : {}), cost: 0, requests: 0, promptTokens: 0, completionTokens: 0 };
      row.cost += b.cost;
      row.requests += b.requests;
      row.promptTokens += b.promptTokens;
      row.completionTokens += b.completionTokens;
      rows.set(id, row);
    }
    for (const row of rows.values()) row.cost = roundCost(row.cost);
    return [...rows.values()].sort((a, b) => b.cost - a.cost);
  }
}

/** The spend view's group of one rollup row (also the daily usage view's, for key, org and model). */
export function groupKey(e: SpendBucket, groupBy: 'key' | 'org' | 'model' | 'day'): string {
  switch (groupBy) {
    case 'key':
      return e.keyId ?? '(none)';
    case 'org':
      return e.org ?? '(none)';
    case 'model':
      return e.model ?? '(none)';
    case 'day':
      return e.hour.slice(0, 10);
  }
}
