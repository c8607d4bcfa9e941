import { expect } from 'chai';
import {
  AuthenticationError,
  BudgetExceededError,
  GatewayError,
  GuardrailBlockedError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  PluginError,
  RateLimitError,
  ServiceUnavailableError,
  UpstreamError,
  UpstreamTimeoutError,
  toGatewayError,
} from '../../../core/errors/gateway-error';

describe('core/errors/gateway-error', () => {
  it('gives each class its status, error type and stable code (design §7)', () => {
    const table = [
      new InvalidRequestError('bad'),
      new AuthenticationError(),
      new PermissionError('no'),
      new NotFoundError('gone'),
      new GuardrailBlockedError('blocked', 'house-rules'),
      new BudgetExceededError('spent'),
      new RateLimitError('slow down'),
      new UpstreamError('broke'),
      new UpstreamTimeoutError(),
      new ServiceUnavailableError('draining'),
    ].map((e) => [e.name, e.status, e.type, e.code]);
    expect(table).to.deep.equal([
      ['InvalidRequestError', 400, 'invalid_request_error', 'invalid_request'],
      ['AuthenticationError', 401, 'authentication_error', 'invalid_api_key'],
      ['PermissionError', 403, 'permission_error', 'permission_denied'],
      ['NotFoundError', 404, 'not_found_error', 'not_found'],
      ['GuardrailBlockedError', 400, 'invalid_request_error', 'guardrail_blocked'],
      ['BudgetExceededError', 429, 'budget_exceeded', 'budget_exceeded'],
      ['RateLimitError', 429, 'rate_limit_error', 'rate_limit_exceeded'],
      ['UpstreamError', 502, 'upstream_error', 'upstream_error'],
      ['UpstreamTimeoutError', 504, 'timeout_error', 'upstream_timeout'],
      ['ServiceUnavailableError', 503, 'service_unavailable', 'service_unavailable'],
    ]);
  });

  it('carries the param, response headers and an upstream status override when given', () => {
    const err = new RateLimitError('wait', 'tpm_exceeded', { headers: { 'retry-after': '3' }, param: 'model' });
    expect([err.code, err.param, err.headers]).to.deep.equal(['tpm_exceeded', 'model', { 'retry-after': '3' }]);
    expect(new UpstreamError('teapot', 'upstream_error', { status: 418 }).status).to.equal(418);
    expect(new InvalidRequestError('x').param).to.equal(null);
  });

  it('turns anything that is not a GatewayError into a generic 500 whose message says nothing of the cause', () => {
    const cause = new Error('ECONNREFUSED 10.0.0.7:5432 password=hunter2');
    const err = toGatewayError(cause);
    expect([err.status, err.type, err.code, err.message]).to.deep.equal([500, 'server_error', 'internal_error', 'The gateway hit an internal error.']);
    expect(err.cause).to.equal(cause);
    const known = new NotFoundError('gone');
    expect(toGatewayError(known)).to.equal(known);
    expect(toGatewayError('a thrown string')).to.be.instanceOf(GatewayError);
  });

  it('prefixes boot errors with the JSON path of the bad field', () => {
    const err = new PluginError('guardrails[2].options', 'prefix must match pattern');
    expect([err.name, err.path, err.message]).to.deep.equal(['PluginError', 'guardrails[2].options', 'guardrails[2].options: prefix must match pattern']);
  });
});
