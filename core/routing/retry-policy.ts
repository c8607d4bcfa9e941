import { GatewayError, toGatewayError } from '../errors/gateway-error';
import { ClientAbortError } from '../upstream/upstream-client';
import { AttemptError, type UpstreamAnswer } from '../upstream/call-deployment';

/** One failed attempt, judged. */
export interface AttemptFailure {
  readonly error: GatewayError;
  /** the upstream's HTTP status, when it answered with an error */
  readonly upstreamStatus?: number;
  /** how long the upstream asked us to wait (Retry-After), ms */
  readonly retryAfterMs?: number;
  /** another attempt (same deployment, another one or a fallback) may succeed */
  readonly retryable: boolean;
  /**
   * a failure another attempt might have fixed, on a request that cannot be sent again (an image edit's
   * streamed files): not retried, yet the deployment failed and it counts toward its cooldown
   */
  readonly unrepeatable?: boolean;
  /** the deployment's provider could not build the request (nothing was sent): another provider might */
  readonly unsent?: boolean;
}

/** Errors of the upstream's own making that are worth another try when it gave no HTTP status. */
const RETRYABLE_TRANSPORT_CODES = new Set([
  'upstream_unreachable',
  'upstream_error',
  'upstream_timeout',
  'upstream_connect_timeout',
  'upstream_idle_timeout',
  'upstream_stream_cut',
  'upstream_stream_error',
  'upstream_bad_response',
]);

/**
 * Connection failures, timeouts, 408, 429 and 5xx are retried; every other upstream answer (400, 401,
 * 403, 404, 413, 422...) is the same wherever it is sent, so it is returned at once. A client that went
 * away is never retried, nor a request the provider could not
 * translate, nor one whose body was streamed from the client (it cannot be sent twice).
 */
export function classifyFailure(err: unknown, now: number): AttemptFailure {
  const attempt = err instanceof AttemptError ? err : undefined;
  const error = toGatewayError(attempt ? attempt.failure : err);
  if (error instanceof ClientAbortError) return { error, retryable: false };
  const judged = judge(error, attempt?.answer, now);
  if (attempt?.unsent) return { error, retryable: false, unsent: true };
  return attempt?.final ? { ...judged, retryable: false, unrepeatable: judged.retryable } : judged;
}

function judge(error: GatewayError, answer: UpstreamAnswer | undefined, now: number): AttemptFailure {
  if (answer) {
    const status = answer.status;
    const retryable = status === 408 || status === 429 || status >= 500;
    // the millisecond form first, when both are given: it is the precise one (Azure sends both)
    const retryAfterMs = parseRetryAfterMs(answer.retryAfterMs) ?? parseRetryAfter(answer.retryAfter, now);
    return { error, upstreamStatus: status, retryAfterMs, retryable };
  }
  // e.g. a provider's translation of an `overloaded` error event at the start of a stream
  const upstreamSide = (error.status === 429 || error.status >= 502) && error.code !== 'internal_error';
  return { error, retryable: RETRYABLE_TRANSPORT_CODES.has(error.code) || upstreamSide };
}

/** `Retry-After` as seconds or as an HTTP date -> ms from now (undefined when absent or unreadable). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** `retry-after-ms`: a number of milliseconds (undefined when absent or unreadable) */
export function parseRetryAfterMs(value: string | undefined): number | undefined {
  const trimmed = value?.trim();
  return trimmed && /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : undefined;
}

export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 8_000;
/** a deployment that asks for a longer pause than this is not waited for */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * How long to wait before trying the same deployment again: exponential backoff with "equal jitter"
 * (half fixed, half random, so retries from many clients spread out), and never less than the
 * upstream's Retry-After. Undefined = not worth waiting for (Retry-After beyond the cap). Moving to
 * another deployment needs no wait.
 */
export function retryDelayMs(retryNumber: number, failure: AttemptFailure, random: () => number): number | undefined {
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS) return undefined;
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, retryNumber - 1));
  const jittered = exp / 2 + random() * (exp / 2);
  return Math.max(jittered, failure.retryAfterMs ?? 0);
}
