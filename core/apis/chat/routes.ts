import type { Router } from 'express';
import { InvalidRequestError } from '../../errors/gateway-error';
import { isUsageOnlyChunk } from './chat-format';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { addModelRoute, type ModelEndpointSpec } from '../../http/model-endpoint';
import { optionalBoolean, optionalNumber, requireObjectBody, requireString } from '../../http/validate';

const CHAT: ModelEndpointSpec = {
  endpoint: 'chat',
  format: 'chat',
  errors: OPENAI_ERRORS,
  credential: (req) => bearerToken(req.headers.authorization),
  // The gateway always asks upstream for stream usage (to price the stream); a client that did not ask
  // for it must not receive the extra chunk.
  skipFrame(frame, body) {
    if (body.stream_options?.include_usage === true || frame.isDone || !frame.data.includes('"usage"')) return false;
    return isUsageOnlyChunk(frame.json);
  },
};

/** Validate what the gateway itself needs; everything else passes through for the upstream to judge. */
function validateChatRequest(raw: unknown) {
  const body = requireObjectBody(raw);
  requireString(body, 'model');
  if (!Array.isArray(body.messages)) {
    throw new InvalidRequestError(body.messages === undefined ? "Missing required parameter: 'messages'." : "Invalid type for 'messages': expected an array.", body.messages === undefined ? 'missing_required_parameter' : 'invalid_type', { param: 'messages' });
  }
  if (body.messages.length === 0) throw new InvalidRequestError("'messages' must contain at least one message.", 'invalid_value', { param: 'messages' });
  body.messages.forEach((m: unknown, i: number) => {
    if (typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string') {
      throw new InvalidRequestError(`Invalid message at messages[${i}]: each message needs a string 'role'.`, 'invalid_value', { param: `messages[${i}]` });
    }
  });
  optionalBoolean(body, 'stream');
  optionalNumber(body, 'temperature');
  optionalNumber(body, 'max_tokens');
  if (body.stream_options != null && (typeof body.stream_options !== 'object' || Array.isArray(body.stream_options))) {
    throw new InvalidRequestError("Invalid type for 'stream_options': expected an object.", 'invalid_type', { param: 'stream_options' });
  }
  return body;
}

export function installChatRoutes(_router: Router, services: GatewayServices): void {
  addModelRoute(services, '/v1/chat/completions', CHAT, validateChatRequest);
}
