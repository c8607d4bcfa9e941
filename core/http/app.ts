import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError, InvalidRequestError, NotFoundError, PayloadTooLargeError } from '../errors/gateway-error';
import { JSONRPC } from '../errors/render';
import { ANTHROPIC_ERRORS, OPENAI_ERRORS, sendError, type ErrorShape } from './error-shapes';
import type { GatewayServices } from './gateway-services';
import { ROUTE_INSTALLERS } from '../apis';
import { assignRequestId } from './request-id';

export { REQUEST_ID_HEADER } from './request-id';

/** Which error shape a path's family uses (contracts.md §4). */
export function errorShapeFor(path: string): ErrorShape {
  return path.startsWith('/native/') || path === '/v1/messages' || path.startsWith('/v1/messages/') ? ANTHROPIC_ERRORS : OPENAI_ERRORS;
}

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
  app.use(express.json({ limit: services.config.server.bodyLimitBytes, type: ['application/json', 'application/*+json'] }));

  const router = express.Router();
  for (const install of ROUTE_INSTALLERS) install(router, services);
  app.use(router);

  app.use((req: Request, res: Response) => {
    sendError(res, new NotFoundError(`Unknown endpoint: ${req.method} ${req.path}`, 'unknown_endpoint'), errorShapeFor(req.path));
  });
  // express answers body-parser failures with HTML unless told otherwise: answer in the family's shape.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = bodyParserError(err);
    if (req.path === '/mcp') {
      if (res.headersSent) return res.end();
      res.status(error.status === 413 ? 413 : 400).json({ jsonrpc: '2.0', id: null, error: { code: error.status === 413 ? JSONRPC.INVALID_REQUEST : JSONRPC.PARSE_ERROR, message: error.message } });
      return;
    }
    if (error.status === 500) services.logger.error('unhandled error', { requestId: res.locals.requestId, error: (err as Error)?.message });
    sendError(res, error, errorShapeFor(req.path));
  });
  return app;
}

function bodyParserError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const type = (err as { type?: string })?.type;
  if (type === 'entity.too.large') return new PayloadTooLargeError();
  if (type === 'entity.parse.failed') return new InvalidRequestError('The request body is not valid JSON.', 'invalid_json');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new InvalidRequestError('Unsupported request body encoding.', 'unsupported_encoding');
  if (type === 'request.aborted') return new InvalidRequestError('The request body was not received completely.', 'request_aborted');
  const status = (err as { status?: number })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return new InvalidRequestError('The request could not be read.', 'bad_request');
  return new GatewayError(500, 'server_error', 'internal_error', 'The gateway hit an internal error.', { cause: err });
}
