import { expect } from 'chai';
import { AuthenticationError, GatewayError, GuardrailBlockedError, InvalidRequestError, NotFoundError, PermissionError, RateLimitError, UpstreamError, UpstreamTimeoutError } from '../../../core/errors/gateway-error';
import { JSONRPC, anthropicErrorBody, jsonRpcErrorBody, openAiErrorBody } from '../../../core/errors/render';

describe('core/errors/render: one error, three wire shapes', () => {
  it('renders the OpenAI shape with message, type, param and code', () => {
    const err = new InvalidRequestError('messages[0].role: unknown role', 'invalid_request', { param: 'messages[0].role' });
    expect(openAiErrorBody(err)).to.deep.equal({
      error: { message: 'messages[0].role: unknown role', type: 'invalid_request_error', param: 'messages[0].role', code: 'invalid_request' },
    });
  });

  it('renders the Anthropic shape with the error type Anthropic uses for each status', () => {
    const types = [
      new InvalidRequestError('bad'),
      new GuardrailBlockedError('blocked'),
      new AuthenticationError(),
      new PermissionError('no'),
      new NotFoundError('gone'),
      new RateLimitError('slow'),
      new UpstreamError('broke'),
      new UpstreamTimeoutError(),
      new GatewayError(503, 'service_unavailable', 'draining', 'draining'),
      new GatewayError(418, 'x', 'teapot', 'odd client status'),
      new GatewayError(507, 'x', 'full', 'odd server status'),
    ].map((e) => anthropicErrorBody(e).error.type);
    expect(types).to.deep.equal([
      'invalid_request_error',
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'invalid_request_error',
      'api_error',
    ]);
    expect(anthropicErrorBody(new NotFoundError('model "x" not found'))).to.deep.equal({ type: 'error', error: { type: 'not_found_error', message: 'model "x" not found' } });
  });

  it('renders JSON-RPC errors with the request id and the gateway code in data', () => {
    const codes = [new AuthenticationError(), new PermissionError('no'), new InvalidRequestError('bad'), new NotFoundError('gone'), new UpstreamError('broke'), new UpstreamTimeoutError(), new RateLimitError('slow')].map(
      (e) => jsonRpcErrorBody(7, e).error.code,
    );
    expect(codes).to.deep.equal([JSONRPC.UNAUTHORIZED, JSONRPC.FORBIDDEN, JSONRPC.INVALID_PARAMS, JSONRPC.INVALID_PARAMS, JSONRPC.UPSTREAM_ERROR, JSONRPC.UPSTREAM_ERROR, JSONRPC.LIMIT_EXCEEDED]);
    expect(jsonRpcErrorBody('a', new NotFoundError('Unknown tool: x', 'mcp_tool_not_found'))).to.deep.equal({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32602, message: 'Unknown tool: x', data: { code: 'mcp_tool_not_found' } },
    });
  });
});
