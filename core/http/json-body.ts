/**
 * Reading a JSON request body, the same way on every JSON endpoint (the fast routes and the express app):
 * the body limit while it arrives, strict UTF-8 (a byte sequence that is not UTF-8 is refused, not
 * silently replaced with U+FFFD and forwarded), a nesting limit before parsing, and a content type that
 * says JSON. Each failure is a GatewayError the endpoint renders in its own shape.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError, InvalidRequestError, PayloadTooLargeError } from '../errors/gateway-error';
import { nestsDeeperThan } from './json-depth';

/** Deeper than any real request (a chat request with tool schemas nests about 10 levels). */
export const MAX_JSON_DEPTH = 128;

/** `fatal`: invalid UTF-8 throws instead of decoding to U+FFFD. One decoder: `decode` keeps no state between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The codes a body can be refused with before it is parsed (JSON-RPC answers them as parse errors). */
export const BODY_PARSE_CODES: ReadonlySet<string> = new Set(['invalid_json', 'invalid_utf8', 'json_too_deep']);

/** application/json, application/<anything>+json, with or without parameters (charset=utf-8). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true; // no type at all: read it as JSON (curl --data-binary, simple scripts)
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Whether a request carries a body at all (a POST without one has nothing to refuse). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Why a request's body will not be read as JSON, before reading it: 415 for a type that is not JSON, or a
 * compressed body (no endpoint inflates request bodies). Undefined when it may be read.
 */
export function bodyRefusal(req: IncomingMessage): GatewayError | undefined {
  if (!hasBody(req)) return undefined;
  const contentType = req.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    return new GatewayError(415, 'invalid_request_error', 'unsupported_media_type', `Unsupported content type ${JSON.stringify(contentType)}: send the body as 'application/json'.`);
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new GatewayError(415, 'invalid_request_error', 'unsupported_content_encoding', `Unsupported content encoding ${JSON.stringify(encoding)}: send the body uncompressed.`);
  }
  return undefined;
}

/** A body as parsed, and its text as received (absent for an empty body). */
export interface JsonBody {
  value: unknown;
  text?: string;
}

const EMPTY: JsonBody = { value: undefined };

/** Decode and parse a complete body (an empty one is `undefined`). */
export function parseJsonBytes(bytes: Buffer): JsonBody {
  if (bytes.length === 0) return EMPTY;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new InvalidRequestError('The request body is not valid UTF-8.', 'invalid_utf8');
  }
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    throw new InvalidRequestError(`The request body nests JSON more than ${MAX_JSON_DEPTH} levels deep.`, 'json_too_deep');
  }
  try {
    return { value: JSON.parse(text), text };
  } catch {
    throw new InvalidRequestError('The request body is not valid JSON.', 'invalid_json');
  }
}

/** The bodies being read, each with what refuses it (see failBodyRead). */
const reading = new WeakMap<IncomingMessage, (error: GatewayError) => void>();

/**
 * Refuse the body `req` is reading with `error`, when the HTTP parser has given up on it (a broken chunk,
 * the request timeout): the route answers it in its own shape, as any other unreadable body. False when
 * no body of `req` is being read.
 */
export function failBodyRead(req: IncomingMessage, error: GatewayError): boolean {
  const fail = reading.get(req);
  if (!fail) return false;
  fail(error);
  return true;
}

/**
 * Read the whole body within `limit` bytes and parse it. The declared length is checked first, so an
 * oversize upload is refused before it is read.
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<JsonBody> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new PayloadTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    reading.set(req, (error) => {
      reading.delete(req);
      if (failed) return;
      failed = true;
      reject(error);
    });
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new PayloadTooLargeError());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      reading.delete(req);
      if (failed) return;
      try {
        resolve(parseJsonBytes(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', () => {
      reading.delete(req);
      if (failed) return;
      failed = true;
      reject(new InvalidRequestError('The request body was not received completely.', 'request_aborted'));
    });
  });
}
