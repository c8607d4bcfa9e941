/**
 * Requests Node's HTTP parser refuses before any handler runs (headers over the limit, a malformed
 * request line). Node's own answer is a bare status line with no body; clients and their SDKs expect the
 * API's error shape, so the answer is written here: the path family's shape (JSON-RPC on /mcp), the
 * OpenAI shape when no path is known. The connection is closed after it.
 *
 * The path comes from the request line. Node hands over only the packet it failed on, and headers over
 * the limit arrive in several packets: the request line is in the first, long gone. So each connection
 * remembers the path of the last packet that began with a request line (`rememberRequestPaths`). */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors/gateway-error';
import { errorShapeFor } from './error-shapes';
import { REQUEST_ID_HEADER } from './request-id';

/**
 * Generous on purpose: multipart bodies carry their boundary in `content-type`, and an over-long one
 * must reach the edit route to get its 400 `invalid_multipart` (Node's default is 16 KiB).
 */
export const MAX_HEADER_BYTES = 256 * 1024;

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
  const path = requestPath(err.rawPacket) ?? (socket as Duplex & { [LAST_PATH]?: string })[LAST_PATH] ?? '/';
  const body = JSON.stringify(errorShapeFor(path).body(error));
  const head = [`HTTP/1.1 ${status} ${reason}`, `${REQUEST_ID_HEADER}: ${randomUUID()}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

const LAST_PATH = Symbol('model-gateway.last-request-path');
const A = 0x41;
const Z = 0x5a;
const SPACE = 0x20;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const CR = 0x0d;
const LF = 0x0a;
/** How far into a packet the request line is looked for. */
const REQUEST_LINE_SCAN = 2048;

/**
 * The path of the request line a packet starts with (`METHOD /path`, up to `?`, a space or the line's
 * end), if it starts with one. Read from the bytes: this runs on every packet the server receives, and
 * only the path itself becomes a string.
 */
function requestPath(packet: Buffer | undefined): string | undefined {
  // a cheap test first: a request line starts with an upper-case method, a JSON body never does
  if (!packet || packet.length === 0 || packet[0] < A || packet[0] > Z) return undefined;
  const end = Math.min(packet.length, REQUEST_LINE_SCAN);
  let i = 1;
  while (i < end && packet[i] >= A && packet[i] <= Z) i++;
  if (i + 1 >= end || packet[i] !== SPACE || packet[i + 1] !== SLASH) return undefined;
  const start = i + 1;
  let stop = start + 1;
  while (stop < end && packet[stop] !== SPACE && packet[stop] !== QUESTION && packet[stop] !== CR && packet[stop] !== LF) stop++;
  return packet.toString('latin1', start, stop);
}

/**
 * Remember, per connection, the path of the latest request line seen, for `answerClientError`. (A
 * 'data' listener makes Node read the socket in JavaScript rather than straight into its parser; the
 * cost is a function call per packet.)
 */
export function rememberRequestPaths(server: Server): void {
  server.on('connection', (socket: Duplex & { [LAST_PATH]?: string }) => {
    socket.on('data', (packet: Buffer) => {
      const path = requestPath(packet);
      if (path !== undefined) socket[LAST_PATH] = path;
    });
  });
}
