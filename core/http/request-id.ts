import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { isAnthropicPath } from './error-shapes';
import { urlPath } from './url-path';

export const REQUEST_ID_HEADER = 'x-gateway-request-id';
/** Where the Anthropic SDK reads a request's id (`_request_id` on answers, `err.requestID`). */
export const ANTHROPIC_REQUEST_ID_HEADER = 'request-id';

/** Give the response its request id (header and `res.locals.requestId`, for express handlers too). */
export function assignRequestId(res: ServerResponse): string {
  const id = randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  // the same id under Anthropic's name, so a Messages client's logs and bug reports carry the gateway's id
  if (isAnthropicPath(urlPath(res.req?.url))) res.setHeader(ANTHROPIC_REQUEST_ID_HEADER, id);
  const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
  if (withLocals.locals) withLocals.locals.requestId = id;
  else withLocals.locals = { requestId: id };
  return id;
}

export function requestIdOf(res: ServerResponse): string {
  return String(res.getHeader(REQUEST_ID_HEADER) ?? '');
}
