/**
 * Google API error answers (Gemini API and Vertex AI: `{"error":{"code","message","status","details"}}`,
 * or that object in a one-item array for a streamed call) -> GatewayError, in the client's API's own
 * error shape once rendered.
 *
 * - 429 / RESOURCE_EXHAUSTED: a rate limit; `Retry-After` from the header, else from the RetryInfo detail;
 * - an invalid or missing API key (400 API_KEY_INVALID, 401, 403): the operator's credentials, a 502
 *   that says so without Google's text;
 * - a prompt over the model's context window: 400 `context_length_exceeded`, as OpenAI names it;
 * - 504 / DEADLINE_EXCEEDED: Google gave up waiting for the model, the gateway's 504 `upstream_timeout`;
 * - other 4xx keep their status; 5xx is a 502 (503 UNAVAILABLE stays a retryable 503).
 */
import { GatewayError, InvalidRequestError, RateLimitError, ServiceUnavailableError, UpstreamError, UpstreamTimeoutError, scrubMessage } from '../../core/plugins/sdk';

type Headers = Record<string, string | string[] | undefined>;

interface GoogleErrorBody {
  error?: { code?: unknown; message?: unknown; status?: unknown; details?: unknown };
}

const CONTEXT_LENGTH = /exceeds the maximum number of tokens|input token count.*exceeds|context length|too many tokens/i;
const AUTH_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_SERVICE_BLOCKED', 'ACCESS_TOKEN_EXPIRED', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'SERVICE_DISABLED']);

export function googleError(label: string, status: number, body: unknown, headers: Headers = {}, inStream = false): GatewayError {
  // a streamGenerateContent call's error answer is the stream's array form holding one error
  // (`[{"error": {...}}]`), even with alt=sse: Vertex AI sends its 429s and 400s so
  const error = ((Array.isArray(body) ? body[0] : body) as GoogleErrorBody | null)?.error;
  const message = typeof error?.message === 'string' ? scrubMessage(error.message).slice(0, 500) : typeof body === 'string' ? scrubMessage(body).slice(0, 300) : '';
  const googleStatus = typeof error?.status === 'string' ? error.status : undefined;
  const details = Array.isArray(error?.details) ? (error.details as Record<string, unknown>[]) : [];
  const reason = details.map((d) => d?.reason).find((r): r is string => typeof r === 'string');

  if (status === 429 || googleStatus === 'RESOURCE_EXHAUSTED') {
    const retryAfter = header(headers, 'retry-after') ?? retryDelaySeconds(details);
    return new RateLimitError(`The ${label} upstream rate-limited the request${suffix(message)}`, 'upstream_rate_limited', retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {});
  }
  if (status === 401 || status === 403 || (reason !== undefined && AUTH_REASONS.has(reason))) {
    return new UpstreamError(`The ${label} upstream refused the gateway\u2019s provider credentials; ask the gateway operator to check them.`, 'upstream_auth_failed');
  }
  if (status === 400 && CONTEXT_LENGTH.test(message)) return new InvalidRequestError(message, 'context_length_exceeded', { param: 'messages' });
  if (status === 404) return new GatewayError(404, 'not_found_error', 'upstream_not_found', `The ${label} upstream does not know this model${suffix(message)}`);
  if (status === 503) return new ServiceUnavailableError(`The ${label} upstream is unavailable${suffix(message)}`, 'upstream_unavailable');
  if (status === 504 || googleStatus === 'DEADLINE_EXCEEDED') return new UpstreamTimeoutError(`The ${label} model did not answer in time${suffix(message)}`, 'upstream_timeout');
  // inside a stream the code says so: the core reads a plain `upstream_error` there as a broken connection
  if (status >= 500) return new UpstreamError(`The ${label} upstream failed (HTTP ${status})${suffix(message)}`, inStream ? 'upstream_stream_error' : 'upstream_error');
  return new GatewayError(status, 'invalid_request_error', 'upstream_invalid_request', message || `The ${label} upstream refused the request (HTTP ${status}).`);
}

/** `google.rpc.RetryInfo` carries `retryDelay` as a duration string such as "31s" or "1.5s". */
function retryDelaySeconds(details: Record<string, unknown>[]): string | undefined {
  for (const detail of details) {
    const delay = detail?.retryDelay;
    const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    if (seconds !== undefined) return String(Math.ceil(Number(seconds)));
  }
  return undefined;
}

function suffix(message: string): string {
  return message ? `: ${message}` : '.';
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
