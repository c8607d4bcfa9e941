import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError, InvalidRequestError, NotFoundError, PayloadTooLargeError } from '../errors/gateway-error';
import { errorShapeFor, sendError } from './error-shapes';
import type { GatewayServices } from './gateway-services';
import { ROUTE_INSTALLERS } from '../apis';
import { assignRequestId } from './request-id';
import { bodyRefusal, readJsonBody } from './json-body';

export { REQUEST_ID_HEADER } from './request-id';
export { errorShapeFor } from './error-shapes';

/** The one endpoint whose body is not JSON: it reads its own multipart form. */
const NON_JSON_BODY_PATHS: ReadonlySet<string> = new Set(['/v1/images/edits']);

export function buildApp(services: GatewayServices): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  // The hot JSON endpoints first (also when the app is mounted on its own, without `listen`).
  app.use((req, res, next) => {
    if (!services.fastRoutes.tryHandle(req, res)) next();
  });
  app.use((_req, res, next) => {
    assignRequestId(res);
    next();
  });
  app.use(jsonBodies(services.config.server.bodyLimitBytes));

  const router = express.Router();
  for (const install of ROUTE_INSTALLERS) install(router, services);
  app.use(router);

  app.use((req: Request, res: Response) => {
    sendError(res, new NotFoundError(`Unknown endpoint: ${req.method} ${req.path}`, 'unknown_endpoint'), errorShapeFor(req.path));
  });
  // express answers body-reading failures with HTML unless told otherwise: answer in the family's shape
  // (JSON-RPC on /mcp).
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = bodyParserError(err);
    if (error.status === 500) services.logger.error('unhandled error', { requestId: res.locals.requestId, error: (err as Error)?.message });
    if (res.headersSent) return void res.end();
    sendError(res, error, errorShapeFor(req.path));
  });
  return app;
}

/**
 * Every body the app's routes read is JSON, read as the fast routes read theirs (json-body.ts: strict
 * UTF-8, a depth limit, the body limit); a body of another type, or a compressed one, is refused with 415
 * before any route sees it. `req.body` stays undefined when there is no body.
 */
function jsonBodies(limit: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (NON_JSON_BODY_PATHS.has(req.path)) return next();
    const refusal = bodyRefusal(req);
    if (refusal) {
      req.resume();
      return next(refusal);
    }
    readJsonBody(req, limit).then((body) => {
      req.body = body.value;
      next();
    }, next);
  };
}

function bodyParserError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const type = (err as { type?: string })?.type;
  if (type === 'entity.too.large') return new PayloadTooLargeError();
  if (type === 'entity.parse.failed') return new InvalidRequestError('The request body is not valid JSON.', 'invalid_json');
  if (type === 'request.aborted') return new InvalidRequestError('The request body was not received completely.', 'request_aborted');
  const status = (err as { status?: number })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return new InvalidRequestError('The request could not be read.', 'bad_request');
  return new GatewayError(500, 'server_error', 'internal_error', 'The gateway hit an internal error.', { cause: err });
}
