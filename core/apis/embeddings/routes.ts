import type { Router } from 'express';
import { InvalidRequestError } from '../../errors/gateway-error';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { addModelRoute, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody, requireString } from '../../http/validate';

const EMBEDDINGS: ModelEndpointSpec = {
  endpoint: 'embeddings',
  format: 'embeddings',
  errors: OPENAI_ERRORS,
  credential: (req) => bearerToken(req.headers.authorization),
};

function validateEmbeddingsRequest(raw: unknown) {
  const body = requireObjectBody(raw);
  requireString(body, 'model');
  const input = body.input;
  const ok = typeof input === 'string' || (Array.isArray(input) && input.length > 0);
  if (!ok) throw new InvalidRequestError(input === undefined ? "Missing required parameter: 'input'." : "'input' must be a string or a non-empty array.", input === undefined ? 'missing_required_parameter' : 'invalid_type', { param: 'input' });
  if (body.stream) throw new InvalidRequestError('Embeddings cannot be streamed.', 'invalid_value', { param: 'stream' });
  return body;
}

export function installEmbeddingsRoutes(_router: Router, services: GatewayServices): void {
  addModelRoute(services, '/v1/embeddings', EMBEDDINGS, validateEmbeddingsRequest);
}
