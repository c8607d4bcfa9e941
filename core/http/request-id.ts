import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'x-gateway-request-id';

/** Give the response its request id (header and `res.locals.requestId`, for express handlers too). */
export function assignRequestId(res: ServerResponse): string {
  const id = randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  const withLocals = res as ServerResponse & { locals?: Record<string, unknown> };
  if (withLocals.locals) withLocals.locals.requestId = id;
  else withLocals.locals = { requestId: id };
  return id;
}

export function requestIdOf(res: ServerResponse): string {
  return String(res.getHeader(REQUEST_ID_HEADER) ?? '');
}
