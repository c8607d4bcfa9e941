import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { isAnthropicPath } from './error-shapes';
import { urlPath } from './url-path';

export const REQUEST_ID_HEADER = 'x-gateway-request-id';
/** Where the Anthropic SDK reads a request's id (`_request_id` on answers, `err.requestID`). */
export const ANTHROPIC_REQUEST_ID_HEADER = 'request-id';
/** Where the OpenAI SDKs read a request's id (`_request_id` on answers, `err.request_id` / `err.requestID`). */
export const OPENAI_REQUEST_ID_HEADER = 'x-request-id';

/**
 * The header a path's client SDK reads the request id from, besides x-gateway-request-id: `request-id` on
 * the Messages paths, `x-request-id` on the other OpenAI-compatible API paths (`/v1/...`).
 */
export function sdkRequestIdHeader(path: string): string | undefined {
  if (isAnthropicPath(path)) return ANTHROPIC_REQUEST_ID_HEADER;
  return path === '/v1' || path.startsWith('/v1/') ? OPENAI_REQUEST_ID_HEADER : undefined;
}

/** Give the response its request id (header and `res.locals.requestId`, for express handlers too). */
export function assignRequestId(res: ServerResponse): string {
  const id = randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  // the same id under the name the client's SDK reads, so its logs and bug reports carry the gateway's id
  const sdkHeader = sdkRequestIdHeader(urlPath(res.req?.url));
  if (sdkHeader) res.setHeader(sdkHeader, id);
  const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
  if (withLocals.locals) withLocals.locals.requestId = id;
  else withLocals.locals = { requestId: id };
  return id;
}

export function requestIdOf(res: ServerResponse): string {
  return String(res.getHeader(REQUEST_ID_HEADER) ?? '');
}
