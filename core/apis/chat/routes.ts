import type { Router } from 'express';
import { isUsageOnlyChunk } from './chat-format';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { addModelRoute, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody } from '../../http/validate';
import { chatRequestValidator } from './request-schema';

const CHAT: ModelEndpointSpec = {
  endpoint: 'chat',
  format: 'chat',
  errors: OPENAI_ERRORS,
  credential: (req) => bearerToken(req.headers.authorization),
  // The gateway always asks upstream for stream usage (to price the stream); a client that did not ask
  // for it must not receive the extra chunk.
  skipFrame(frame, body) {
    if (body.stream_options?.include_usage === true || frame.isDone || !frame.hasKey('usage')) return false;
    return isUsageOnlyChunk(frame.json);
  },
};

/** The request schema (request-schema.ts), on pass-through too; unknown fields go on to the upstream. */
function validateChatRequest(raw: unknown) {
  const body = requireObjectBody(raw);
  chatRequestValidator.check(body);
  return body;
}

export function installChatRoutes(_router: Router, services: GatewayServices): void {
  addModelRoute(services, '/v1/chat/completions', CHAT, validateChatRequest);
}
