/**
 * Claude models on Vertex AI: the Messages API behind `:rawPredict` / `:streamRawPredict`. The body is the
 * Anthropic one (providers/anthropic/translate.ts) with the model moved into the URL and the version
 * in the body as `anthropic_version`; answers, stream events and model errors are Anthropic's own.
 */
import { InvalidRequestError, type ChatRequest, type MessagesRequest } from '../../core/plugins/sdk';
import { messagesRequestFromChat } from '../anthropic/translate';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Vertex serves Anthropic's models under the `anthropic` publisher; their names all start with `claude`. */
export function isAnthropicModel(model: string): boolean {
  return /^claude/i.test(model);
}

export function vertexMessagesBody(request: ChatRequest, model: string): Omit<MessagesRequest, 'model'> & { anthropic_version: string } {
  refuseImageLinks(request);
  const { model: _model, ...body } = messagesRequestFromChat(request, model);
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body };
}

/**
 * Claude on Vertex reads images only from base64 sources (Anthropic's vision guide: no URL sources on
 * Google-managed Claude), and the gateway does not fetch links for clients: a link is refused here, naming
 * the part, rather than sent as a `url` source Vertex refuses in its own words.
 */
function refuseImageLinks(request: ChatRequest): void {
  if (!Array.isArray(request?.messages)) return;
  request.messages.forEach((message, i) => {
    if (!Array.isArray(message?.content)) return;
    message.content.forEach((part, j) => {
      const url = part?.type === 'image_url' ? (part as { image_url?: { url?: unknown } }).image_url?.url : undefined;
      if (typeof url === 'string' && /^https?:\/\//i.test(url)) {
        const at = `messages[${i}].content[${j}].image_url.url`;
        throw new InvalidRequestError(`${at}: Claude on Vertex AI takes images as base64 data: URLs, not links`, 'invalid_request', { param: at });
      }
    });
  });
}
