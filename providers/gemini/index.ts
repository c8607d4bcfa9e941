/**
 * The `gemini` provider: Google's Gemini API (generativelanguage.googleapis.com) with an API key.
 *
 *   chat        -> models/M:generateContent, or models/M:streamGenerateContent?alt=sse when streaming
 *   embeddings  -> models/M:embedContent (one input) or models/M:batchEmbedContents
 *
 * The key goes in the `x-goog-api-key` header, never in the URL (where it would end up in access logs).
 * Every other client format (Messages, Responses, gateway_proxy) reaches it through the chat translation.
 */
import { definePlugin, withConfiguredHeaders, type Clock, type HttpOperation, type Provider, type ProviderTarget, type ChatRequest, type EmbeddingsRequest, type SseFrame, type StreamState } from '../../core/plugins/sdk';
import { chatResponseFromGemini } from './response';
import { chatFramesFromGeminiChunk, endOfGeminiStream } from './stream';
import { embeddingsResponse, geminiEmbeddingBody, geminiVectors, joinEmbeddings, splitEmbeddingInputs } from './embeddings';
import { geminiRequestFromChat } from './request';
import { googleError } from './errors';

export const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** `gemini-2.5-flash` -> `models/gemini-2.5-flash`; a name that already has a collection (`tunedModels/x`) is kept. */
export function geminiModelPath(model: string): string {
  return model.includes('/') ? model : `models/${model}`;
}

/** One path segment per piece, so a model name cannot walk elsewhere on the host. */
function pathOf(modelPath: string): string {
  return modelPath.split('/').map(encodeURIComponent).join('/');
}

/** The chat operation shared by the Gemini API and Vertex AI's Gemini models: only path and headers differ. */
export function geminiChatOperation(label: string, clock: Clock, where: (target: ProviderTarget, method: 'generateContent' | 'streamGenerateContent?alt=sse') => { path: string; headers: Record<string, string> }): HttpOperation<ChatRequest> {
  return {
    toUpstream(request, target) {
      const body = geminiRequestFromChat(request, target.model.model);
      const { path, headers } = where(target, request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
      return { path, method: 'POST', headers, body: JSON.stringify(body) };
    },
    fromUpstream: (body, target) => chatResponseFromGemini(body, target.model.model, Math.floor(clock.now() / 1000)),
    fromUpstreamEvent(frame: SseFrame, state: StreamState, target) {
      const json = frame.json;
      // an error after the stream started comes as a data frame holding a Google error body
      if (json && typeof json === 'object' && json.error) throw googleError(label, typeof json.error.code === 'number' ? json.error.code : 500, json, {}, true);
      return chatFramesFromGeminiChunk(json, state, target.model.model, Math.floor(clock.now() / 1000));
    },
    endOfStream: (state) => endOfGeminiStream(state),
  };
}

function createGeminiProvider(clock: Clock): Provider {
  function headers(target: ProviderTarget): Record<string, string> {
    const out = withConfiguredHeaders({ 'content-type': 'application/json' }, target);
    if (target.provider.apiKey) out['x-goog-api-key'] = target.provider.apiKey;
    return out;
  }

  const chat = geminiChatOperation('Gemini', clock, (target, method) => ({
    path: `/${pathOf(geminiModelPath(target.model.model))}:${method}`,
    headers: headers(target),
  }));

  /** batchEmbedContents refuses more: "at most 100 requests can be in one batch" */
  const BATCH_EMBED_LIMIT = 100;
  const embeddings: HttpOperation<EmbeddingsRequest> = {
    toUpstream(request, target) {
      const modelPath = geminiModelPath(target.model.model);
      const { batch, body } = geminiEmbeddingBody(request, modelPath);
      return { path: `/${pathOf(modelPath)}:${batch ? 'batchEmbedContents' : 'embedContent'}`, method: 'POST', headers: headers(target), body: JSON.stringify(body) };
    },
    fromUpstream: (body, target, request) => embeddingsResponse(geminiVectors(body), request, target.model.model, body?.usageMetadata?.promptTokenCount ?? 0),
    split: (request) => splitEmbeddingInputs(request, BATCH_EMBED_LIMIT),
    join: (answers) => joinEmbeddings(answers),
  };

  return {
    defaultBaseUrl: DEFAULT_BASE_URL,
    operations: { chat, embeddings },
    toError: (status, body, responseHeaders) => googleError('Gemini', status, body, responseHeaders),
  };
}

export default definePlugin<'provider', Record<string, never>, Provider>({
  kind: 'provider',
  id: 'gemini',
  apiVersion: 1,
  optionsSchema: { type: 'object', properties: {}, additionalProperties: false },
  create: (_options, deps) => createGeminiProvider(deps.clock),
});
