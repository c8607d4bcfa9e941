import type { IncomingMessage, ServerResponse } from 'node:http';
import { toGatewayError, type GatewayError } from '../errors/gateway-error';
import { bodyRefusal, readJsonBody, type JsonBody } from './json-body';
import { sendError, type ErrorShape } from './error-shapes';
import { assignRequestId } from './request-id';
import { urlPath } from './url-path';

/** `text`: the body exactly as received, for a handler that may pass it on unchanged (model-endpoint.ts) */
export type JsonPostHandler = (req: IncomingMessage, res: ServerResponse, body: unknown, text: string | undefined) => Promise<void>;

/** Answers a body that could not be read (413, 415, not JSON...): a route that needs a key checks it first. */
export type BodyRefusalHandler = (req: IncomingMessage, res: ServerResponse, error: GatewayError) => Promise<void>;

interface Route {
  errors: ErrorShape;
  handle: JsonPostHandler;
  /** headers on every answer, also the ones this router gives itself (e.g. Deprecation) */
  headers?: Record<string, string>;
  refuse?: BodyRefusalHandler;
}

/**
 * The hot JSON POST endpoints (chat, embeddings, messages) are answered straight from node:http: every
 * request crosses them, and express's router and body parser cost more than the rest of the request's
 * own work. Everything else goes through the express app. Same contract as the app: a request id on every
 * answer, 413 over the body limit, 415 for a body that is not JSON, bad bytes (not UTF-8, nested too deep,
 * not JSON) 400, each in the family's error shape (json-body.ts reads bodies for both).
 */
export class FastJsonRoutes {
  private readonly routes = new Map<string, Route>();

  constructor(private readonly bodyLimitBytes: number) {}

  add(path: string, errors: ErrorShape, handle: JsonPostHandler, headers?: Record<string, string>, refuse?: BodyRefusalHandler): void {
    this.routes.set(path, { errors, handle, headers, refuse });
  }

  /** Handle the request if it is one of ours; false means "not mine, pass it on". */
  tryHandle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'POST') return false;
    const route = this.routes.get(urlPath(req.url));
    if (!route) return false;
    assignRequestId(res);
    this.readBody(req).then(
      (body) => route.handle(req, res, body.value, body.text),
      (error: GatewayError) => {
        if (error.status === 413) res.setHeader('connection', 'close');
        if (route.headers) for (const [k, v] of Object.entries(route.headers)) res.setHeader(k, v);
        if (route.refuse) return route.refuse(req, res, error);
        sendError(res, error, route.errors);
      },
    ).catch((err: unknown) => {
      // the handlers answer their own errors; this only guards against an unexpected throw (an upstream's
      // answer too deeply nested to serialise, say), which still gets the family's error shape
      sendError(res, toGatewayError(err), route.errors);
    });
    return true;
  }

  private readBody(req: IncomingMessage): Promise<JsonBody> {
    const refusal = bodyRefusal(req);
    if (!refusal) return readJsonBody(req, this.bodyLimitBytes);
    req.resume(); // answered without reading: let the body go by
    return Promise.reject(refusal);
  }
}
