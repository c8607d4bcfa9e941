import type { Router } from 'express';
import { InvalidRequestError } from '../../errors/gateway-error';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { addModelRoute, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody } from '../../http/validate';
import { embeddingsRequestValidator } from './request-schema';

const EMBEDDINGS: ModelEndpointSpec = {
  endpoint: 'embeddings',
  format: 'embeddings',
  errors: OPENAI_ERRORS,
  credential: (req) => bearerToken(req.headers.authorization),
};

/** The request schema (request-schema.ts); embeddings never stream. */
function validateEmbeddingsRequest(raw: unknown) {
  const body = requireObjectBody(raw);
  embeddingsRequestValidator.check(body);
  if (body.stream) throw new InvalidRequestError('Embeddings cannot be streamed.', 'invalid_value', { param: 'stream' });
  return body;
}

export function installEmbeddingsRoutes(_router: Router, services: GatewayServices): void {
  addModelRoute(services, '/v1/embeddings', EMBEDDINGS, validateEmbeddingsRequest);
}
