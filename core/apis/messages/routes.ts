/**
 * The Anthropic-native Messages endpoints (interface §4.2, §9.2):
 *
 *   POST /native/v1/messages                 Messages, JSON or SSE, for any model
 *   POST /native/v1/messages/count_tokens    token counting, Anthropic models only
 *   POST /v1/messages[/count_tokens]         deprecated aliases: same answers, plus Deprecation + Link
 *
 * The key comes as `x-api-key` (Anthropic SDK 0.x) or `Authorization: Bearer` (1.x); with both, the one
 * the gateway knows. Errors, including a failure after a stream started, are in the Anthropic shape. For
 * an Anthropic model the body passes through unchanged but for the model name; any other model is served
 * by translation to chat.
 */
import type { IncomingMessage } from 'node:http';
import type { Router } from 'express';
import { InvalidRequestError } from '../../errors/gateway-error';
import { bearerToken } from '../../http/credentials';
import { ANTHROPIC_ERRORS } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { refuseBody, runModelRequest, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody } from '../../http/validate';
import { countTokensRequestValidator, messagesRequestValidator } from './request-schema';

export const MESSAGES_PATH = '/native/v1/messages';
export const COUNT_TOKENS_PATH = '/native/v1/messages/count_tokens';

function xApiKey(req: IncomingMessage): string | undefined {
  const apiKey = req.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : undefined;
}

/**
 * `x-api-key`, else the Bearer token. A client may send both with different keys: the SDK 1.x sends its
 * `apiKey` as a Bearer token, while an `x-api-key` set beside it (defaultHeaders, or Claude Code with
 * ANTHROPIC_API_KEY left in its environment) often holds the user's own Anthropic key. Then both are
 * candidates and the auth stage signs in with the one the gateway knows (x-api-key first).
 */
function messagesKey(req: IncomingMessage): string | readonly string[] | undefined {
  const apiKey = xApiKey(req);
  const bearer = bearerToken(req.headers.authorization);
  if (apiKey === undefined) return bearer;
  return bearer === undefined || bearer === apiKey ? apiKey : [apiKey, bearer];
}

/** What a deprecated alias adds to every answer: a Deprecation header and a Link to its successor. */
function deprecationHeaders(successor: string): Record<string, string> {
  return { deprecation: 'true', link: `<${successor}>; rel="successor-version"` };
}

const MESSAGES: ModelEndpointSpec = { endpoint: 'messages', format: 'messages', errors: ANTHROPIC_ERRORS, credential: messagesKey };
const COUNT_TOKENS: ModelEndpointSpec = { endpoint: 'messages.count_tokens', format: 'messages.count_tokens', errors: ANTHROPIC_ERRORS, credential: messagesKey };

/** The request schema (request-schema.ts), on pass-through too; unknown fields go on unchanged. */
function validateMessagesRequest(raw: unknown, countOnly: boolean) {
  const body = requireObjectBody(raw);
  if (countOnly) {
    countTokensRequestValidator.check(body);
    if (body.stream === true) throw new InvalidRequestError('stream: count_tokens does not stream', 'invalid_value', { param: 'stream' });
  } else {
    messagesRequestValidator.check(body);
  }
  return body;
}

export function installMessagesRoutes(_router: Router, services: GatewayServices): void {
  const routes: [path: string, spec: ModelEndpointSpec, countOnly: boolean][] = [
    [MESSAGES_PATH, MESSAGES, false],
    [COUNT_TOKENS_PATH, COUNT_TOKENS, true],
    ['/v1/messages', { ...MESSAGES, headers: deprecationHeaders(MESSAGES_PATH) }, false],
    ['/v1/messages/count_tokens', { ...COUNT_TOKENS, headers: deprecationHeaders(COUNT_TOKENS_PATH) }, true],
  ];
  for (const [path, spec, countOnly] of routes) {
    services.fastRoutes.add(path, ANTHROPIC_ERRORS, async (req, res, raw, text) => {
      let body;
      try {
        body = validateMessagesRequest(raw, countOnly);
      } catch (err) {
        return refuseBody(services, spec, req, res, err, raw);
      }
      await runModelRequest(services, spec, req, res, body, body === raw ? text : undefined);
    }, spec.headers, (req, res, error) => refuseBody(services, spec, req, res, error));
  }
}
