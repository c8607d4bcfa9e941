import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayError, InvalidRequestError, NotFoundError, PayloadTooLargeError, toGatewayError } from '../errors/gateway-error';
import { adminPrincipal } from '../apis/admin/admin-auth';
import { bearerToken } from './credentials';
import { checkKeyBeside } from './key-check';
import { errorShapeFor, sendError } from './error-shapes';
import type { GatewayServices } from './gateway-services';
import { ROUTE_INSTALLERS } from '../apis';
import { assignRequestId } from './request-id';
import { bodyRefusal, readJsonBody } from './json-body';
import { refuseBody, type ModelEndpointSpec } from './model-endpoint';
import { RESPONSES_CALLER } from '../apis/responses/responses-handler';
import { GENERATIONS_CALLER } from '../apis/images/routes';

export { REQUEST_ID_HEADER } from './request-id';
export { errorShapeFor } from './error-shapes';

/** The one endpoint whose body is not JSON: it reads its own multipart form. */
const NON_JSON_BODY_PATHS: ReadonlySet<string> = new Set(['/v1/images/edits']);

/**
 * The model endpoints served here, whose bodies this reads: a body they cannot read is refused through the
 * pipeline, as the fast routes refuse theirs (refuseBody), so the 401 or the 400/413/415 is counted, and
 * a caller with a valid key gets its log entry and access line. Answered beside it, neither showed anywhere.
 */
const MODEL_BODY_PATHS: ReadonlyMap<string, ModelEndpointSpec> = new Map([
  ['/v1/responses', RESPONSES_CALLER],
  ['/v1/images/generations', GENERATIONS_CALLER],
]);

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
  const router = express.Router();
  for (const install of ROUTE_INSTALLERS) install(router, services);
  app.use(jsonBodies(services, router));
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
function jsonBodies(services: GatewayServices, router: express.Router) {
  const limit = services.config.server.bodyLimitBytes;
  // a body that cannot be read waits behind the key: a caller without a valid one learns nothing of it
  const refuse = (req: Request, res: Response, next: NextFunction) => (error: unknown) => {
    // as on the fast routes: the rest of a body refused for its size is not worth reading (kept alive, the
    // connection went on reading and dropping it, up to the request timeout)
    if (error instanceof GatewayError && error.status === 413) res.setHeader('connection', 'close');
    // nothing serves this method here (POST /v1/models): its 404, as with a body that parses
    if (!routed(router, req.path, req.method)) return next();
    const spec = req.method === 'POST' ? MODEL_BODY_PATHS.get(req.path) : undefined;
    if (spec) return void refuseBody(services, spec, req, res, error).catch(next);
    callerRefusal(services, req, res).then((refused) => next(refused ?? error), next);
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (NON_JSON_BODY_PATHS.has(req.path)) return next();
    const refusal = bodyRefusal(req);
    if (refusal) {
      req.resume();
      // a path nothing serves is a 404 whatever its body: the openai SDK's images.createVariation (a
      // multipart form) was told to send JSON, as if the gateway served it
      if (!routed(router, req.path, req.method)) return next();
      return refuse(req, res, next)(refusal);
    }
    readJsonBody(req, limit).then((body) => {
      req.body = body.value;
      next();
    }, refuse(req, res, next));
  };
}

/** Whether some route of `router` serves `method` on `path` (middleware without a route: any method). */
function routed(router: express.Router, path: string, method: string): boolean {
  // the router's layers match as they dispatch (their `match` and `route` are not in express's published types)
  return (router.stack as unknown as { match(path: string): unknown; route?: { _handlesMethod(method: string): boolean } }[]).some((layer) => {
    if (layer.route && !layer.route._handlesMethod(method)) return false;
    try {
      return Boolean(layer.match(path));
    } catch {
      // a malformed %-escape in a parameter: the route's own decoding answers it
      return true;
    }
  });
}

/**
 * The 401/403 a caller of a keyed path gets (the model APIs, the management API), or undefined. The
 * model list's and the management API's are counted by the check their routes make (checkKeyBeside):
 * refused here instead, a body on the request kept a flood of bad keys out of the metrics.
 */
async function callerRefusal(services: GatewayServices, req: Request, res: Response): Promise<GatewayError | undefined> {
  try {
    if (req.path.startsWith('/admin/')) await adminPrincipal(services, req, res);
    else if (req.path === '/v1/models' || req.path.startsWith('/v1/models/')) await checkKeyBeside(services, 'models', bearerToken(req.headers.authorization), false, askedModel(req.path));
    else if (req.path.startsWith('/v1/')) await services.auth.check(bearerToken(req.headers.authorization), false);
    return undefined;
  } catch (err) {
    return toGatewayError(err);
  }
}

/** The model `/v1/models/{id}` asks about (as its route reads it), for the metrics' label. */
function askedModel(path: string): string | undefined {
  if (!path.startsWith('/v1/models/')) return undefined;
  try {
    return decodeURIComponent(path.slice('/v1/models/'.length));
  } catch {
    return '';
  }
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
