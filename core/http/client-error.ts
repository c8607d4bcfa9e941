/**
 * Requests Node's HTTP parser refuses before any handler runs (headers over the limit, a malformed
 * request line). Node's own answer is a bare status line with no body; clients and their SDKs expect the
 * API's error shape, so the answer is written here: the path family's shape (JSON-RPC on /mcp) when the
 * request line is in the packet Node kept, the OpenAI shape otherwise. The connection is closed after it.
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors/gateway-error';
import { jsonRpcErrorBody } from '../errors/render';
import { errorShapeFor } from './app';
import { REQUEST_ID_HEADER } from './request-id';

/**
 * Generous on purpose: multipart bodies carry their boundary in `content-type`, and an over-long one
 * must reach the edit route to get its 400 `invalid_multipart` (Node's default is 16 KiB).
 */
export const MAX_HEADER_BYTES = 256 * 1024;

const REQUEST_LINE = /^[A-Z]+ (\/[^ ?\r\n]*)/;

/** What Node answers these with (status and reason), now with a body; anything else is a 400. */
const ANSWERS: Record<string, [status: number, reason: string, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'chunk_extensions_too_large', 'The chunk extensions of the request body are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.'],
};
const BAD_REQUEST: [number, string, string, string] = [400, 'Bad Request', 'malformed_request', 'The request could not be read as HTTP.'];

export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  // a response already under way on this connection cannot be followed by another one
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
  const error = new GatewayError(status, 'invalid_request_error', code, message);
  const path = REQUEST_LINE.exec(err.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1] ?? '/';
  const body = JSON.stringify(path === '/mcp' ? jsonRpcErrorBody(null, error) : errorShapeFor(path).body(error));
  const head = [`HTTP/1.1 ${status} ${reason}`, `${REQUEST_ID_HEADER}: ${randomUUID()}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
