import { GatewayError, InvalidRequestError, RateLimitError, UpstreamError, UpstreamTimeoutError, scrubMessage } from '../../core/plugins/sdk';

// OpenAI's and vLLM's wording; xAI's: "This model's maximum prompt length is 131072 but the request contains 136973 tokens."
const CONTEXT_LENGTH = /maximum (?:context|prompt) length is \d+/i;

/**
 * An OpenAI-compatible upstream's error answer -> GatewayError. The client's own mistakes (400/422) keep
 * the upstream's message; the upstream's authentication failures are the operator's problem and become a
 * 502 that says so without repeating the provider's message (it may quote part of the provider key).
 */
export function openAiUpstreamError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>): GatewayError {
  const upstream = (body as { error?: { message?: unknown; code?: unknown; param?: unknown } } | undefined)?.error;
  // xAI words its errors as {"code": "Client specified an invalid argument", "error": "<the message>"}
  const bare: unknown = upstream;
  const message =
    typeof upstream?.message === 'string' ? scrubMessage(upstream.message) : typeof bare === 'string' && bare ? scrubMessage(bare) : typeof body === 'string' && body ? scrubMessage(body.slice(0, 300)) : '';
  const param = typeof upstream?.param === 'string' ? upstream.param : null;
  // and refuses an API key with a 400 so ("Incorrect API key provided: xa***tF"): the operator's problem, as a 401 is
  if (typeof bare === 'string' && /incorrect api key/i.test(bare)) return new UpstreamError('The upstream refused the gateway\'s credentials for this deployment.', 'upstream_auth_failed');
  if (status === 400 || status === 422) {
    if (typeof upstream?.code === 'string') return new InvalidRequestError(message || 'The upstream rejected the request.', upstream.code, { param });
    // vLLM words a prompt over the context window as OpenAI does but sends its HTTP status as the code;
    // xAI sends none, and a code that is a sentence ("Client specified an invalid argument")
    if (CONTEXT_LENGTH.test(message)) return new InvalidRequestError(message, 'context_length_exceeded', { param: param ?? 'messages' });
    return new InvalidRequestError(message || 'The upstream rejected the request.', 'upstream_invalid_request', { param });
  }
  if (status === 413) return new GatewayError(413, 'invalid_request_error', 'payload_too_large', message || 'The upstream says the request is too large.');
  if (status === 429) {
    const retryAfter = headers['retry-after'];
    return new RateLimitError(message || 'The upstream is rate limiting requests.', 'upstream_rate_limited', {
      headers: typeof retryAfter === 'string' ? { 'retry-after': retryAfter } : {},
    });
  }
  if (status === 401 || status === 403) return new UpstreamError('The upstream refused the gateway\'s credentials for this deployment.', 'upstream_auth_failed');
  if (status === 404) return new UpstreamError('The upstream does not know this deployment\'s model or path.', 'upstream_not_found');
  if (status === 408 || status === 504) return new UpstreamTimeoutError();
  return new UpstreamError(`The upstream failed with status ${status}${message ? `: ${message}` : ''}.`, 'upstream_error');
}
