import { GatewayError } from './gateway-error';
import { scrubSecrets } from './scrub';

// Every error message a client sees goes through one of these renderers, so this is where configured
// secret values are scrubbed from them, whoever built the message.

/** `{"error":{"message","type","param","code"}}` on /v1/* and the management API. */
export function openAiErrorBody(err: GatewayError) {
  return { error: { message: scrubSecrets(err.message), type: err.type, param: err.param, code: err.code } };
}

const ANTHROPIC_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
  529: 'overloaded_error',
};

/** `{"type":"error","error":{"type","message"}}` on the Messages endpoints. */
export function anthropicErrorBody(err: GatewayError) {
  const type = ANTHROPIC_TYPE_BY_STATUS[err.status] ?? (err.status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: scrubSecrets(err.message) } };
}

/** JSON-RPC 2.0 error codes used on /mcp. */
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** implementation-defined server errors */
  UNAUTHORIZED: -32001,
  UPSTREAM_ERROR: -32002,
  FORBIDDEN: -32003,
  /** a budget or rate limit refused the request (HTTP 429 elsewhere): the client may retry later, nothing broke */
  LIMIT_EXCEEDED: -32004,
} as const;

/**
 * Refusals of the HTTP request itself, before any JSON-RPC message was read: "Invalid Request". A body
 * not sent in time (408) is the client's doing too, not an internal error.
 */
const INVALID_REQUEST_STATUSES: ReadonlySet<number> = new Set([405, 406, 408, 413, 415, 431]);
/** The body could not be read as JSON at all: "Parse error". */
const PARSE_ERROR_CODES: ReadonlySet<string> = new Set(['invalid_json', 'invalid_utf8', 'json_too_deep']);

export function jsonRpcErrorBody(id: string | number | null, err: GatewayError) {
  let code: number = JSONRPC.INTERNAL_ERROR;
  if (PARSE_ERROR_CODES.has(err.code)) code = JSONRPC.PARSE_ERROR;
  else if (INVALID_REQUEST_STATUSES.has(err.status)) code = JSONRPC.INVALID_REQUEST;
  else if (err.status === 401) code = JSONRPC.UNAUTHORIZED;
  else if (err.status === 403) code = JSONRPC.FORBIDDEN;
  else if (err.status === 429) code = JSONRPC.LIMIT_EXCEEDED;
  else if (err.status === 400 || err.status === 404) code = JSONRPC.INVALID_PARAMS;
  else if (err.status >= 502) code = JSONRPC.UPSTREAM_ERROR;
  // a JSON-RPC client never sees the HTTP headers of a batch's answers: the pause travels with the error
  const retryAfter = code === JSONRPC.LIMIT_EXCEEDED ? retryAfterSeconds(err.headers['retry-after']) : undefined;
  const data = retryAfter === undefined ? { code: err.code } : { code: err.code, retryAfter };
  return { jsonrpc: '2.0' as const, id, error: { code, message: scrubSecrets(err.message), data } };
}

/** A Retry-After given in seconds (the only form the gateway sends), as a number. */
function retryAfterSeconds(header: string | undefined): number | undefined {
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
}
