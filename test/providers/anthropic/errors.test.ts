import { expect } from 'chai';
import { anthropicError } from '../../../providers/anthropic/errors';
import { GatewayError } from '../../../core/errors/gateway-error';

function summary(err: GatewayError) {
  return { status: err.status, type: err.type, code: err.code, message: err.message, headers: err.headers };
}

function body(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

describe('anthropic provider: upstream errors', () => {
  it('keeps a 400 with Anthropic\u2019s message', () => {
    expect(summary(anthropicError(400, body('invalid_request_error', 'max_tokens: Field required'), {}))).to.deep.equal({
      status: 400,
      type: 'invalid_request_error',
      code: 'upstream_invalid_request',
      message: 'max_tokens: Field required',
      headers: {},
    });
  });

  it('keeps a 429 as a rate limit and passes Retry-After on', () => {
    expect(summary(anthropicError(429, body('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'), { 'retry-after': '17' }))).to.deep.equal({
      status: 429,
      type: 'rate_limit_error',
      code: 'upstream_rate_limited',
      message: 'The Anthropic upstream rate-limited the request: Number of request tokens has exceeded your per-minute rate limit',
      headers: { 'retry-after': '17' },
    });
  });

  it('turns 529 overloaded into a retryable 503', () => {
    expect(summary(anthropicError(529, body('overloaded_error', 'Overloaded'), {}))).to.deep.equal({
      status: 503,
      type: 'service_unavailable',
      code: 'upstream_overloaded',
      message: 'The Anthropic upstream is overloaded: Overloaded',
      headers: {},
    });
  });

  it('turns any other 5xx into a 502, even with a body that is not JSON', () => {
    expect(summary(anthropicError(500, '<html>Internal Server Error</html>', {}))).to.deep.equal({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_error',
      message: 'The Anthropic upstream failed (HTTP 500).',
      headers: {},
    });
  });

  it('reports a rejected provider key as the gateway\u2019s fault, without echoing the key', () => {
    const err = anthropicError(401, body('authentication_error', 'invalid x-api-key sk-ant-api03-SECRETSECRET'), {});
    expect(summary(err)).to.deep.equal({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_auth_failed',
      message: 'The Anthropic upstream refused the gateway\u2019s provider credentials; ask the gateway operator to check the provider API key.',
      headers: {},
    });
  });

  it('cuts credentials and URLs out of upstream messages', () => {
    const err = anthropicError(404, body('not_found_error', 'model: claude-nope not found at https://api.anthropic.com/v1/messages?key=sk-ant-abcdefgh'), {});
    expect(summary(err)).to.deep.equal({
      status: 404,
      type: 'not_found_error',
      code: 'upstream_not_found',
      message: 'model: claude-nope not found at [url]',
      headers: {},
    });
  });
});
