/** One request-log row (contracts.md §3). Never carries a secret or a guarded value. */
export interface LogEntry {
  id: string;
  /** ISO-8601 time the request started */
  time: string;
  keyId: string | null;
  org: string | null;
  /** e.g. "chat", "messages", "embeddings", "images", "responses", "mcp" */
  endpoint: string;
  /** the model name the client asked for, or `MCP: <tool>` */
  model: string | null;
  deploymentId: string | null;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  /** HTTP status sent (or that would have been sent) to the client */
  status: number;
  latencyMs: number;
  errorCode?: string | null;
  /** why a request ended early: "client_abort", "upstream_cut", ... */
  outcome?: string;
  requestId?: string;
  /** free-form structured details added by stages (server, attempts, guardrail verdicts) */
  details?: Record<string, unknown>;
}

export interface LogQuery {
  key?: string;
  org?: string;
  model?: string;
  /** ISO time; only entries at or after it */
  since?: string;
  /** ISO time; only entries before it */
  until?: string;
  /** only entries whose HTTP status is within [statusMin, statusMax] */
  statusMin?: number;
  statusMax?: number;
  /** one entry by its id (the request id) */
  id?: string;
  limit: number;
  /** opaque, from a previous page */
  cursor?: string;
}

export interface LogPage {
  data: LogEntry[];
  nextCursor: string | null;
}

export function matchesLogQuery(entry: LogEntry, query: LogQuery): boolean {
  if (query.key && entry.keyId !== query.key) return false;
  if (query.org && entry.org !== query.org) return false;
  if (query.model && entry.model !== query.model) return false;
  if (query.since && entry.time < query.since) return false;
  if (query.until && entry.time >= query.until) return false;
  if (query.statusMin !== undefined && entry.status < query.statusMin) return false;
  if (query.statusMax !== undefined && entry.status > query.statusMax) return false;
  if (query.id && entry.id !== query.id) return false;
  return true;
}

/** how far out of time order a log row may have been written and still be found by a scan from a time */
const LOG_SCAN_SLACK_MS = 10 * 60_000;

/**
 * The time a scan of the log from `since` starts looking at (SQLite's and Redis's `scanLogs`): rows are
 * written in about the order of their times, so LOG_SCAN_SLACK_MS earlier. Undefined when `since` is not
 * a time.
 */
export function scanStartTime(since: string): string | undefined {
  const at = Date.parse(since);
  return Number.isNaN(at) ? undefined : new Date(Math.max(0, at - LOG_SCAN_SLACK_MS)).toISOString();
}
