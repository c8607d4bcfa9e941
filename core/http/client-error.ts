/**
 * Requests Node's HTTP parser refuses before any handler runs (headers over the limit, a malformed
 * request line). Node's own answer is a bare status line with no body; clients and their SDKs expect the
 * API's error shape, so the answer is written here: the path family's shape when the request line is in
 * the packet Node kept, the OpenAI shape otherwise. The connection is closed after it.
 */
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors/gateway-error';
import { errorShapeFor } from './app';

/**
 * Generous on purpose: multipart bodies carry their boundary in `content-type`, and an over-long one
 * must reach the edit route to get its 400 `invalid_multipart` (Node's default is 16 KiB).
 */
export const MAX_HEADER_BYTES = 256 * 1024;

const REQUEST_LINE = /^[A-Z]+ (\/[^ ?\r\n]*)/;

export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new GatewayError(431, 'invalid_request_error', 'headers_too_large', 'The request headers are too large.')
      : new GatewayError(400, 'invalid_request_error', 'malformed_request', 'The request could not be read as HTTP.');
  const path = REQUEST_LINE.exec(err.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1] ?? '/';
  const body = JSON.stringify(errorShapeFor(path).body(error));
  const reason = error.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
