/**
 * Anthropic error answers -> GatewayError. The status tells the client whose problem it is:
 * 429 stays a rate limit, an overloaded Anthropic (529 or `overloaded_error`) is a 503 the client may
 * retry, any other upstream 5xx is a 502, and a 4xx keeps its status (the request itself was refused).
 *
 * Messages are Anthropic's own text with anything shaped like a credential or URL cut out; a 401/403 is
 * about the gateway's provider key, and a 402 about its account's billing, not the client's: each gets a fixed message.
 */
import { GatewayError, RateLimitError, ServiceUnavailableError, UpstreamError } from '../../core/plugins/sdk';

type Headers = Record<string, string | string[] | undefined>;

/** OpenAI-style error type for a kept 4xx status. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  422: 'invalid_request_error',
};

/** Status for an error met inside a stream (there is no HTTP status then), by Anthropic error type. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  billing_error: 402,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const MAX_MESSAGE = 500;

/**
 * Anthropic's 400s for a conversation over the context window ("prompt is too long: 208760 tokens >
 * 200000 maximum", "input length and `max_tokens` exceed context limit: ..."): clients trim their history
 * on OpenAI's code for these, which the Gemini and Bedrock providers give too.
 */
const CONTEXT_LENGTH = /prompt is too long|exceed context limit/i;

export function anthropicError(status: number | undefined, body: unknown, headers: Headers = {}): GatewayError {
  const upstream = (body as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  const upstreamType = typeof upstream?.type === 'string' ? upstream.type : undefined;
  const effective = status ?? (upstreamType !== undefined && Object.hasOwn(STATUS_BY_TYPE, upstreamType) ? STATUS_BY_TYPE[upstreamType] : undefined) ?? 500;
  const message = scrub(typeof upstream?.message === 'string' ? upstream.message : '');
  const retryAfter = header(headers, 'retry-after');
  const extra = retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {};

  if (effective === 529 || upstreamType === 'overloaded_error') {
    return withHeaders(new ServiceUnavailableError(`The Anthropic upstream is overloaded${suffix(message)}`, 'upstream_overloaded'), extra);
  }
  if (effective === 429) return new RateLimitError(`The Anthropic upstream rate-limited the request${suffix(message)}`, 'upstream_rate_limited', extra);
  if (effective >= 500) return new UpstreamError(`The Anthropic upstream failed (HTTP ${effective})${suffix(message)}`, 'upstream_error', extra);
  if (effective === 401 || effective === 403) {
    return new GatewayError(
      502,
      'upstream_error',
      'upstream_auth_failed',
      'The Anthropic upstream refused the gateway\u2019s provider credentials; ask the gateway operator to check the provider API key.',
    );
  }
  // billing_error: the gateway's Anthropic account is out of credit, which the client can neither fix nor
  // pay for (kept, it read as the client's own 402, typed invalid_request_error)
  if (effective === 402) {
    return new GatewayError(
      502,
      'upstream_error',
      'upstream_billing',
      'The Anthropic upstream refused the gateway\u2019s provider account for billing; ask the gateway operator to check its plan and credits.',
    );
  }
  if (effective === 400 && CONTEXT_LENGTH.test(message)) return new GatewayError(400, 'invalid_request_error', 'context_length_exceeded', message, { param: 'messages' });
  const type = TYPE_BY_STATUS[effective] ?? 'invalid_request_error';
  return new GatewayError(effective, type, effective === 404 ? 'upstream_not_found' : 'upstream_invalid_request', message || `The Anthropic upstream refused the request (HTTP ${effective}).`);
}

function suffix(message: string): string {
  return message ? `: ${message}` : '.';
}

/** Cut credentials and URLs out of an upstream message, and bound its length. */
export function scrub(message: string): string {
  return message
    .replace(/https?:\/\/\S+/gi, '[url]')
    .replace(/\b(sk-[A-Za-z0-9_-]{6,}|[A-Za-z0-9_-]{32,})/g, '[redacted]')
    .slice(0, MAX_MESSAGE);
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function withHeaders(err: GatewayError, extra: { headers?: Record<string, string> }): GatewayError {
  if (extra.headers) Object.assign(err.headers, extra.headers);
  return err;
}
