/**
 * Claude models on Vertex AI: the Messages API behind `:rawPredict` / `:streamRawPredict`. The body is the
 * Anthropic one (providers/anthropic/translate.ts) with the model moved into the URL and the version
 * in the body as `anthropic_version`; answers, stream events and model errors are Anthropic's own.
 */
import type { ChatRequest, MessagesRequest } from '../../core/plugins/sdk';
import { messagesRequestFromChat } from '../anthropic/translate';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Vertex serves Anthropic's models under the `anthropic` publisher; their names all start with `claude`. */
export function isAnthropicModel(model: string): boolean {
  return /^claude/i.test(model);
}

export function vertexMessagesBody(request: ChatRequest, model: string): Omit<MessagesRequest, 'model'> & { anthropic_version: string } {
  const { model: _model, ...body } = messagesRequestFromChat(request, model);
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body };
}
