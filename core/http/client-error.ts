/**
 * Requests over the header limit, and requests Node's HTTP parser refuses before any handler runs (a
 * malformed request line or header). Node's own answer is a bare status line with no body; clients and
 * their SDKs expect the API's error shape, so the answer is written here: the path family's shape
 * (JSON-RPC on /mcp), the OpenAI shape when no path is known. The connection is closed after it, once
 * the client stops sending (answerClientError).
 *
 * The gateway's header limit is checked on the parsed request (`refuseOversizedHead`), where the path is
 * known: headers over the limit arrive in several packets, and Node hands its clientError handler only the
 * packet it failed on, with the request line long gone. Node's parser gets a limit four times as high, a
 * backstop against unbounded header buffering; a request over that one gets the path of its failing
 * packet if that holds a request line, else the OpenAI shape. (Remembering each connection's last request
 * line instead would need a 'data' listener on every socket, which takes the socket off Node's native
 * parser path: about 6% more CPU on every request.)
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors/gateway-error';
import { errorShapeFor, sendError } from './error-shapes';
import { failBodyRead } from './json-body';
import { REQUEST_ID_HEADER, assignRequestId, sdkRequestIdHeader } from './request-id';
import { urlPath } from './url-path';

/**
 * Generous on purpose: multipart bodies carry their boundary in `content-type`, and an over-long one
 * must reach the edit route to get its 400 `invalid_multipart` (Node's default is 16 KiB).
 */
export const MAX_HEADER_BYTES = 256 * 1024;

/** Node's parser limit: the backstop above the gateway's own (see the top of this file). */
export const PARSER_HEADER_BYTES = 4 * MAX_HEADER_BYTES;

/** What Node answers these with (status and reason), now with a body; anything else is a 400. */
const ANSWERS: Record<string, [status: number, reason: string, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'chunk_extensions_too_large', 'The chunk extensions of the request body are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.'],
};
const BAD_REQUEST: [number, string, string, string] = [400, 'Bad Request', 'malformed_request', 'The request could not be read as HTTP.'];

/** How long a connection answered here may go on sending before it is closed anyway. */
const LINGER_MS = 2000;

/** Connections answered here, still reading what their clients send. */
const answered = new WeakSet<Duplex>();

export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  // Once the parser has failed, every packet that follows fails it again and comes here. The answer is
  // written already: the packets are read and dropped until the client closes (or LINGER_MS), because a
  // socket closed with the client's bytes still arriving is reset, and a reset makes the client's system
  // throw away the answer it has not read yet (web servers' "lingering close").
  if (answered.has(socket)) return;
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
  const error = new GatewayError(status, 'invalid_request_error', code, message);
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight) {
    // The parser gave up on the body of a request a route already has (a broken chunk, a body still
    // unfinished at the request timeout): the route reading it answers, in its shape and through its log,
    // as any unreadable body (closed without a word, the client saw a reset where Node itself answers).
    // A response already under way on this connection cannot be followed by another one; a client that
    // ended its side mid-body has gone (nothing tells it from one that only half-closed): a client abort.
    if (err.code === 'HPE_INVALID_EOF_STATE' || inFlight.headersSent || !failBodyRead(inFlight.req, error)) {
      socket.destroy();
      return;
    }
    inFlight.setHeader('connection', 'close');
    answered.add(socket);
    inFlight.once('finish', () => setTimeout(() => socket.destroy(), LINGER_MS).unref());
    return;
  }
  const path = requestPath(err.rawPacket) ?? '/';
  const body = JSON.stringify(errorShapeFor(path).body(error));
  const id = randomUUID();
  const head = [`HTTP/1.1 ${status} ${reason}`, `${REQUEST_ID_HEADER}: ${id}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  const sdkHeader = sdkRequestIdHeader(path);
  if (sdkHeader) head.splice(2, 0, `${sdkHeader}: ${id}`);
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  answered.add(socket);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  // the client has stopped sending: close as soon as the answer is out
  socket.once('end', () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy())));
  socket.once('close', () => clearTimeout(linger));
}

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

/** A request line and headers over MAX_HEADER_BYTES: answered 431 in the path's shape, and the connection closed. */
export function refuseOversizedHead(req: IncomingMessage, res: ServerResponse): boolean {
  if (headBytes(req) <= MAX_HEADER_BYTES) return false;
  assignRequestId(res);
  res.setHeader('connection', 'close');
  const [status, , code, message] = ANSWERS.HPE_HEADER_OVERFLOW;
  sendError(res, new GatewayError(status, 'invalid_request_error', code, message), errorShapeFor(urlPath(req.url)));
  return true;
}

/** The request's head as it came: `METHOD URL HTTP/1.1` CRLF, then `name: value` CRLF per header, then CRLF. */
function headBytes(req: IncomingMessage): number {
  const raw = req.rawHeaders;
  let bytes = (req.method?.length ?? 0) + (req.url?.length ?? 0) + 13;
  for (let i = 0; i < raw.length; i += 2) bytes += raw[i].length + raw[i + 1].length + 4;
  return bytes + 2;
}
