import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors/gateway-error';
import { EVENT_STREAM_HEADERS } from './event-stream-headers';
import { anthropicContextLengthMessage } from '../apis/messages/context-length';
import { anthropicErrorBody, jsonRpcErrorBody, openAiErrorBody } from '../errors/render';

/** How an endpoint family writes errors: as a JSON answer, and as a frame after a stream started. */
export interface ErrorShape {
  body(err: GatewayError): unknown;
  streamFrame(err: GatewayError): string;
}

export const OPENAI_ERRORS: ErrorShape = {
  body: openAiErrorBody,
  // The OpenAI SDKs raise an APIError when a stream's data carries an `error` object.
  streamFrame: (err) => `data: ${JSON.stringify(openAiErrorBody(err))}\n\n`,
};

/** A prompt over the context window in Anthropic's words, whichever provider refused it (Claude Code acts on them). */
function anthropicBody(err: GatewayError) {
  const body = anthropicErrorBody(err);
  if (err.code === 'context_length_exceeded') body.error.message = anthropicContextLengthMessage(body.error.message);
  return body;
}

export const ANTHROPIC_ERRORS: ErrorShape = {
  body: anthropicBody,
  streamFrame: (err) => `event: error\ndata: ${JSON.stringify(anthropicBody(err))}\n\n`,
};

/**
 * `/mcp` and every path below it: a JSON-RPC error with a null id (the message, if any, was not read), so
 * an MCP client reads every failure, whatever the method or path, as JSON-RPC.
 */
export const JSONRPC_ERRORS: ErrorShape = {
  body: (err) => jsonRpcErrorBody(null, err),
  streamFrame: (err) => `event: message\ndata: ${JSON.stringify(jsonRpcErrorBody(null, err))}\n\n`,
};

/** The paths that speak Anthropic's wire: its error shape, and its `request-id` header. */
export function isAnthropicPath(path: string): boolean {
  return path.startsWith('/native/') || path === '/v1/messages' || path.startsWith('/v1/messages/');
}

/** Which error shape a path's family uses (contracts.md §4). */
export function errorShapeFor(path: string): ErrorShape {
  if (path === '/mcp' || path.startsWith('/mcp/')) return JSONRPC_ERRORS;
  return isAnthropicPath(path) ? ANTHROPIC_ERRORS : OPENAI_ERRORS;
}

/** `asEvent`: as one event of an event stream, for a client that reads only those (an MCP client's `Accept`). */
export function sendError(res: ServerResponse, err: GatewayError, shape: ErrorShape, asEvent = false): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.statusCode = err.status === 499 ? 400 : err.status;
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (asEvent) {
    for (const [name, value] of Object.entries(EVENT_STREAM_HEADERS)) res.setHeader(name, value);
    res.end(shape.streamFrame(err));
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(shape.body(err)));
}
