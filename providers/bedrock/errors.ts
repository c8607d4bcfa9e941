/**
 * Bedrock error answers -> GatewayError. Bedrock names the error in the `x-amzn-errortype` header
 * (`ThrottlingException:http://...`) or, inside a stream, in the exception message's type; the body is
 * `{"message": "..."}`.
 *
 * - ThrottlingException, ServiceQuotaExceededException, ModelNotReadyException, 429: rate limited (429),
 *   Retry-After passed on when Bedrock sends one;
 * - signature, token and access errors (403 and friends): the operator's AWS credentials, a 502;
 * - a prompt over the context window (ValidationException saying so): 400 `context_length_exceeded`;
 * - ModelTimeoutException: 504; ServiceUnavailableException: 503; other 5xx and ModelErrorException: 502.
 */
import { GatewayError, InvalidRequestError, RateLimitError, ServiceUnavailableError, UpstreamError, UpstreamTimeoutError, scrubMessage } from '../../core/plugins/sdk';

type Headers = Record<string, string | string[] | undefined>;

const THROTTLED = new Set(['throttlingexception', 'servicequotaexceededexception', 'modelnotreadyexception', 'toomanyrequestsexception']);
const AUTH = new Set(['accessdeniedexception', 'unrecognizedclientexception', 'invalidsignatureexception', 'expiredtokenexception', 'incompletesignatureexception', 'missingauthenticationtokenexception']);
/**
 * What Bedrock's models say of a prompt over the context window. Not any "maximum ... tokens": that is
 * also how Bedrock refuses a `max_tokens` over the model's output limit ("The maximum tokens you
 * requested exceeds the model limit of 4096"), which a client fixes by lowering `max_tokens`, not by
 * trimming its messages.
 */
const CONTEXT_LENGTH = /too long|too many (input )?tokens|context (length|window)|input tokens? (count )?exceeds|exceeds the (maximum|max) (number of )?input tokens/i;

/** A stream exception has no HTTP status: its type says which it would have had. */
const STATUS_BY_TYPE: ReadonlyMap<string, number> = new Map([
  ['validationexception', 400],
  ['modelstreamerrorexception', 424],
  ['modeltimeoutexception', 408],
  ['serviceunavailableexception', 503],
  ['internalserverexception', 500],
]);

export function bedrockError(status: number | undefined, body: unknown, headers: Headers, streamType?: string): GatewayError {
  const type = errorType(streamType ?? header(headers, 'x-amzn-errortype') ?? (body as { __type?: unknown })?.__type);
  const raw = (body as { message?: unknown; Message?: unknown } | null)?.message ?? (body as { Message?: unknown } | null)?.Message;
  const message = typeof raw === 'string' ? scrubMessage(raw).slice(0, 500) : typeof body === 'string' ? scrubMessage(body).slice(0, 300) : '';
  const effective = status ?? STATUS_BY_TYPE.get(type) ?? (THROTTLED.has(type) ? 429 : AUTH.has(type) ? 403 : 500);

  if (effective === 429 || THROTTLED.has(type)) {
    const retryAfter = header(headers, 'retry-after');
    return new RateLimitError(`The Bedrock upstream throttled the request${suffix(message)}`, 'upstream_rate_limited', retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {});
  }
  if (AUTH.has(type) || effective === 401 || effective === 403) {
    return new UpstreamError('The Bedrock upstream refused the gateway\u2019s AWS credentials; ask the gateway operator to check the access keys, region and model access.', 'upstream_auth_failed');
  }
  if (effective === 400 && CONTEXT_LENGTH.test(message)) return new InvalidRequestError(message, 'context_length_exceeded', { param: 'messages' });
  if (effective === 404) return new GatewayError(404, 'not_found_error', 'upstream_not_found', `The Bedrock upstream does not know this model${suffix(message)}`);
  if (effective === 408 || type === 'modeltimeoutexception') return new UpstreamTimeoutError(`The Bedrock model did not answer in time${suffix(message)}`, 'upstream_timeout');
  if (effective === 503) return new ServiceUnavailableError(`The Bedrock upstream is unavailable${suffix(message)}`, 'upstream_unavailable');
  // inside a stream the code says so: the core reads a plain `upstream_error` there as a broken connection
  if (effective >= 500 || effective === 424) return new UpstreamError(`The Bedrock upstream failed (${type || `HTTP ${effective}`})${suffix(message)}`, streamType ? 'upstream_stream_error' : 'upstream_error');
  return new GatewayError(effective, 'invalid_request_error', 'upstream_invalid_request', message || `The Bedrock upstream refused the request (HTTP ${effective}).`);
}

/** `ThrottlingException:http://internal.amazon.com/...` or `com.amazon#ThrottlingException` -> `throttlingexception`. */
function errorType(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value.split(':')[0].split('#').pop()!.toLowerCase();
}

function suffix(message: string): string {
  return message ? `: ${message}` : '.';
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
