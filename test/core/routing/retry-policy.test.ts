import { expect } from 'chai';
import { InvalidRequestError, RateLimitError, UpstreamError, UpstreamTimeoutError, toGatewayError } from '../../../core/errors/gateway-error';
import { classifyFailure, parseRetryAfter, retryDelayMs } from '../../../core/routing/retry-policy';
import { ClientAbortError } from '../../../core/upstream/upstream-client';
import { AttemptError } from '../../../core/upstream/call-deployment';
import { sequence } from './routing-fixtures';

describe('retry policy', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  it('retries connection failures, timeouts, cut streams and error first events', () => {
    for (const error of [
      new UpstreamError('x', 'upstream_unreachable'),
      new UpstreamTimeoutError(),
      new UpstreamTimeoutError('x', 'upstream_connect_timeout'),
      new UpstreamError('x', 'upstream_stream_cut'),
      new UpstreamError('x', 'upstream_stream_error'),
    ]) {
      expect(classifyFailure(error, now).retryable, error.code).to.equal(true);
    }
  });

  it('never retries the client\'s own mistakes, a client that went away, or an internal error', () => {
    expect(classifyFailure(new InvalidRequestError('bad'), now).retryable).to.equal(false);
    expect(classifyFailure(new ClientAbortError(), now).retryable).to.equal(false);
    expect(classifyFailure(toGatewayError(new TypeError('bug')), now).retryable).to.equal(false);
  });

  it('retries a provider error raised from a rate-limited or overloaded stream', () => {
    expect(classifyFailure(new RateLimitError('slow down', 'upstream_rate_limited'), now).retryable).to.equal(true);
    expect(classifyFailure(new UpstreamError('overloaded', 'overloaded_error', { status: 529 }), now).retryable).to.equal(true);
  });

  it('reads an attempt\'s upstream answer and finality from the attempt, and hands on the upstream\'s own error', () => {
    const busy = new UpstreamError('busy', 'upstream_error', { status: 503 });
    const retried = classifyFailure(new AttemptError(busy, false, { status: 503, retryAfter: '2' }), now);
    expect(retried).to.deep.include({ error: busy, retryable: true, upstreamStatus: 503, retryAfterMs: 2000 });
    const refused = new InvalidRequestError('bad field');
    expect(classifyFailure(new AttemptError(refused, false, { status: 400 }), now)).to.deep.include({ error: refused, retryable: false, upstreamStatus: 400 });
    // a body streamed from the client was used up: never again, whatever the upstream said
    expect(classifyFailure(AttemptError.final(new AttemptError(busy, false, { status: 503 })), now)).to.deep.include({ error: busy, retryable: false });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3', now)).to.equal(3000);
    expect(parseRetryAfter('0.5', now)).to.equal(500);
    expect(parseRetryAfter(new Date(now + 10_000).toUTCString(), now)).to.equal(10_000);
    expect(parseRetryAfter('soon', now)).to.equal(undefined);
    expect(parseRetryAfter(undefined, now)).to.equal(undefined);
  });

  it('backs off exponentially with equal jitter, never less than Retry-After, and gives up on long pauses', () => {
    const failure = { error: new UpstreamError('x'), retryable: true };
    expect(retryDelayMs(1, failure, sequence(0))).to.equal(125);
    expect(retryDelayMs(1, failure, sequence(1))).to.equal(250);
    expect(retryDelayMs(3, failure, sequence(0))).to.equal(500);
    expect(retryDelayMs(10, failure, sequence(1))).to.equal(8_000);
    expect(retryDelayMs(1, { ...failure, retryAfterMs: 2_000 }, sequence(0))).to.equal(2_000);
    expect(retryDelayMs(1, { ...failure, retryAfterMs: 120_000 }, sequence(0))).to.equal(undefined);
  });
});
