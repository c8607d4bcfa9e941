import { definePlugin, type HttpOperation, type Provider, type ProviderTarget, type ChatRequest, type EmbeddingsRequest } from '../../core/plugins/sdk';
import { openAiUpstreamError } from './errors';
import { openAiImageOperations } from './images';

interface OpenAiOptions {
  /** extra path segment style: OpenAI-compatible servers all use /chat/completions under the base URL */
  organization?: string;
  project?: string;
}

function upstreamHeaders(target: ProviderTarget, options: OpenAiOptions): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...target.provider.headers };
  if (target.provider.apiKey) headers.authorization = `Bearer ${target.provider.apiKey}`;
  if (options.organization) headers['openai-organization'] = options.organization;
  if (options.project) headers['openai-project'] = options.project;
  return headers;
}

/**
 * Anthropic thinking blocks passed back on assistant turns (the gateway's `thinking_blocks`) mean nothing
 * to an OpenAI-compatible server, and OpenAI refuses unknown message fields: they are left out.
 */
function withoutThinkingBlocks(messages: ChatRequest['messages']): ChatRequest['messages'] {
  if (!Array.isArray(messages) || !messages.some((m) => m?.thinking_blocks !== undefined)) return messages;
  return messages.map((m) => {
    if (m?.thinking_blocks === undefined) return m;
    const { thinking_blocks: _dropped, ...rest } = m;
    return rest;
  });
}

/**
 * The OpenAI API and every OpenAI-compatible server (vLLM, Ollama, LM Studio, llama.cpp). The client's
 * format is the upstream's: bodies pass through unchanged except the model name; responses and stream
 * frames are returned as the upstream sent them.
 */
function createOpenAiProvider(options: OpenAiOptions): Provider {
  const chat: HttpOperation<ChatRequest> = {
    toUpstream(request, target) {
      const body: ChatRequest = { ...request, model: target.model.model, messages: withoutThinkingBlocks(request.messages) };
      // Always ask for stream usage so no stream is priced at $0; the chat endpoint drops the usage
      // chunk again for clients that did not ask for it.
      if (body.stream) body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
      return { path: '/chat/completions', headers: upstreamHeaders(target, options), body: JSON.stringify(body) };
    },
    fromUpstream: (body) => body,
    fromUpstreamEvent: (frame) => frame,
  };
  const embeddings: HttpOperation<EmbeddingsRequest> = {
    toUpstream: (request, target) => ({ path: '/embeddings', headers: upstreamHeaders(target, options), body: JSON.stringify({ ...request, model: target.model.model }) }),
    fromUpstream: (body) => body,
  };
  const images = openAiImageOperations((target) => upstreamHeaders(target, options));
  return {
    defaultBaseUrl: 'https://api.openai.com/v1',
    operations: { chat, embeddings, 'images.generations': images.generations, 'images.edits': images.edits },
    toError: openAiUpstreamError,
  };
}

export default definePlugin<'provider', OpenAiOptions, Provider>({
  kind: 'provider',
  id: 'openai',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { organization: { type: 'string', nullable: true }, project: { type: 'string', nullable: true } },
  } as never,
  create: (options) => createOpenAiProvider(options),
});
