import { bodyWithModel, type ChatRequest, type EmbeddingsRequest, type EmbeddingsResponse, type HttpOperation, type ProviderTarget } from '../../core/plugins/sdk';
import { openAiImageOperations } from './images';

export interface OpenAiWire {
  /** the headers of every request (content type, credentials) */
  headersFor(target: ProviderTarget): Record<string, string>;
  /** the chat body as this upstream takes it (a vendor preset drops or renames what the vendor rejects) */
  chatBody?(body: ChatRequest, target: ProviderTarget): ChatRequest;
  /** whether this upstream takes `stream_options` (asked for a stream's usage); by default it does */
  takesStreamOptions?(target: ProviderTarget): boolean;
  /**
   * whether this upstream takes `max_completion_tokens`: a `max_tokens` then goes as that field, the only
   * one OpenAI's reasoning models (o-series, gpt-5) take; by default `max_tokens` goes as sent
   */
  takesMaxCompletionTokens?(target: ProviderTarget): boolean;
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
 * Some OpenAI-compatible servers (LM Studio, LocalAI, older Ollama) ignore `encoding_format` and answer
 * floats. The openai SDKs ask for base64 unless told otherwise and read whatever comes as base64 float32
 * bytes: a list of floats came out as a vector a quarter of its length, of meaningless values, with no
 * error. Such vectors are packed as OpenAI packs them (little-endian float32); a base64 answer is untouched.
 */
function withBase64Vectors(body: EmbeddingsResponse): EmbeddingsResponse {
  const data = body?.data;
  if (!Array.isArray(data) || !data.some((item) => Array.isArray(item?.embedding))) return body;
  const packed = (vector: number[]) => Buffer.from(new Float32Array(vector).buffer).toString('base64');
  return { ...body, data: data.map((item) => (Array.isArray(item?.embedding) ? { ...item, embedding: packed(item.embedding) } : item)) };
}

/**
 * The OpenAI API's operations, shared by `openai` (with its presets) and `azure-openai`: bodies pass
 * through with the model name rewritten, answers and stream frames come back as the upstream sent them.
 * Paths are the OpenAI ones under the base URL; a provider with other paths rewrites them.
 */
export function openAiOperations(wire: OpenAiWire): Record<'chat' | 'embeddings' | 'images.generations' | 'images.edits', HttpOperation> {
  const chat: HttpOperation<ChatRequest> = {
    toUpstream(request, target, inbound) {
      const messages = withoutThinkingBlocks(request.messages);
      // Ask for stream usage so no stream is priced at $0; the chat endpoint drops the usage chunk again
      // for clients that did not ask for it. An upstream that refuses the field streams without it (the
      // meter then estimates the usage).
      const takesStreamOptions = wire.takesStreamOptions?.(target) !== false;
      const askUsage = Boolean(request.stream) && request.stream_options?.include_usage !== true && takesStreamOptions;
      // The Messages and Responses translations ask for the usage themselves, as clients may: an upstream
      // that refuses the field would refuse the whole request, so it is left out and the usage estimated.
      const dropStreamOptions = !takesStreamOptions && request.stream_options != null;
      // The Messages and Responses translations (and many clients) cap tokens with `max_tokens`, which
      // OpenAI's reasoning models refuse ("Use 'max_completion_tokens' instead"): where the upstream is
      // known to take the newer field, the cap goes as that, which every OpenAI chat model reads alike.
      const renameCap = request.max_tokens != null && request.max_completion_tokens == null && wire.takesMaxCompletionTokens?.(target) === true;
      if (messages === request.messages && !askUsage && !dropStreamOptions && !renameCap && !wire.chatBody) {
        return { path: '/chat/completions', headers: wire.headersFor(target), body: bodyWithModel(request, target.model.model, inbound) };
      }
      let body: ChatRequest = { ...request, model: target.model.model, messages };
      if (renameCap) {
        body.max_completion_tokens = body.max_tokens;
        delete body.max_tokens;
      }
      if (askUsage) body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
      if (dropStreamOptions) delete body.stream_options;
      if (wire.chatBody) body = wire.chatBody(body, target);
      return { path: '/chat/completions', headers: wire.headersFor(target), body: JSON.stringify(body) };
    },
    fromUpstream: (body) => body,
    // no fromUpstreamEvent: stream frames pass on as the upstream's own, each read's batch as decoded
  };
  const embeddings: HttpOperation<EmbeddingsRequest> = {
    toUpstream: (request, target, inbound) => ({ path: '/embeddings', headers: wire.headersFor(target), body: bodyWithModel(request, target.model.model, inbound) }),
    fromUpstream: (body, _target, request) => (request?.encoding_format === 'base64' ? withBase64Vectors(body) : body),
  };
  const images = openAiImageOperations(wire.headersFor);
  return { chat, embeddings, 'images.generations': images.generations, 'images.edits': images.edits };
}
