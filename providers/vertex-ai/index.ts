/**
 * The `vertex-ai` provider: Google's and Anthropic's models on Vertex AI, with OAuth2 tokens from a
 * service account (token-source.ts) added to every attempt in `prepareRequest`.
 *
 *   Gemini models  -> .../publishers/google/models/M:generateContent | :streamGenerateContent?alt=sse
 *                     (the Gemini translation, providers/gemini)
 *   Claude models  -> .../publishers/anthropic/models/M:rawPredict | :streamRawPredict
 *                     (the Anthropic translation, providers/anthropic; anthropic.ts)
 *   embeddings     -> .../publishers/google/models/M:predict
 *
 * where ... is /projects/{project}/locations/{location} under https://{location}-aiplatform.googleapis.com/v1
 * (https://aiplatform.googleapis.com/v1 for the `global` location). `project` defaults to the key file's
 * project_id, `location` to us-central1.
 */
import {
  definePlugin,
  withConfiguredHeaders,
  UpstreamError,
  type ChatRequest,
  type EmbeddingsRequest,
  type HttpFetch,
  type HttpOperation,
  type Clock,
  type PreparedRequest,
  type Provider,
  type ProviderConfig,
  type ProviderTarget,
} from '../../core/plugins/sdk';
import { chatResponseFromMessages } from '../anthropic/translate';
import { chatFramesFromMessagesEvent } from '../anthropic/stream';
import { anthropicError } from '../anthropic/errors';
import { geminiChatOperation } from '../gemini';
import { googleError } from '../gemini/errors';
import { isAnthropicModel, vertexMessagesBody } from './anthropic';
import { joinEmbeddings } from '../gemini/embeddings';
import { embeddingsFromVertex, splitEmbeddings, vertexEmbeddingBody } from './embeddings';
import { tokenSource, type TokenSource } from './token-source';

export const DEFAULT_LOCATION = 'us-central1';

export function defaultVertexBaseUrl(provider: ProviderConfig<string>): string {
  const location = provider.location ?? DEFAULT_LOCATION;
  return location === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${encodeURIComponent(location)}-aiplatform.googleapis.com/v1`;
}

function createVertexProvider(clock: Clock, fetch: HttpFetch, entry: ProviderConfig<string> | undefined): Provider {
  /** one token source per provider entry: it caches and refreshes its token */
  const sources = new Map<string, TokenSource>();
  function sourceFor(provider: ProviderConfig<string>): TokenSource {
    let source = sources.get(provider.id);
    if (!source) {
      source = tokenSource(provider.credentials, fetch, provider.id);
      sources.set(provider.id, source);
    }
    return source;
  }

  function modelPath(target: ProviderTarget, publisher: 'google' | 'anthropic'): string {
    const { provider } = target;
    const project = provider.project ?? sourceFor(provider).projectId;
    if (!project) throw new UpstreamError(`The gateway\u2019s Vertex AI provider "${provider.id}" names no project (and its credentials none); ask the gateway operator to set one.`, 'provider_misconfigured');
    const location = provider.location ?? DEFAULT_LOCATION;
    return `/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers/${publisher}/models/${encodeURIComponent(target.model.model)}`;
  }

  function headers(target: ProviderTarget): Record<string, string> {
    return withConfiguredHeaders({ 'content-type': 'application/json' }, target);
  }

  const gemini = geminiChatOperation('Vertex AI', clock, (target, method) => ({ path: `${modelPath(target, 'google')}:${method}`, headers: headers(target) }));
  const now = () => Math.floor(clock.now() / 1000);

  const chat: HttpOperation<ChatRequest> = {
    toUpstream(request, target, inbound) {
      if (!isAnthropicModel(target.model.model)) return gemini.toUpstream(request, target, inbound);
      const body = vertexMessagesBody(request, target.model.model);
      return { path: `${modelPath(target, 'anthropic')}:${request.stream ? 'streamRawPredict' : 'rawPredict'}`, method: 'POST', headers: headers(target), body: JSON.stringify(body) };
    },
    fromUpstream: (body, target, request) => (isAnthropicModel(target.model.model) ? chatResponseFromMessages(body, now()) : gemini.fromUpstream(body, target, request)),
    fromUpstreamEvent: (frame, state, target) => (isAnthropicModel(target.model.model) ? chatFramesFromMessagesEvent(frame, state, clock) : gemini.fromUpstreamEvent!(frame, state, target)),
    endOfStream: (state, target) => (isAnthropicModel(target.model.model) ? [] : gemini.endOfStream!(state, target)),
  };

  const embeddings: HttpOperation<EmbeddingsRequest> = {
    toUpstream: (request, target) => ({ path: `${modelPath(target, 'google')}:predict`, method: 'POST', headers: headers(target), body: JSON.stringify(vertexEmbeddingBody(request)) }),
    fromUpstream: (body, target, request) => embeddingsFromVertex(body, request, target.model.model),
    split: (request, target) => splitEmbeddings(request, target.model.model),
    join: (answers) => joinEmbeddings(answers),
  };

  return {
    operations: { chat, embeddings },
    defaultBaseUrl: entry ? defaultVertexBaseUrl(entry) : undefined,
    async prepareRequest(request: PreparedRequest, target: ProviderTarget) {
      const token = await sourceFor(target.provider).token();
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
    },
    toError(status, body, responseHeaders) {
      // one provider instance per entry: its token was refused, and the next attempt must not send it again
      if (status === 401 && entry) sources.get(entry.id)?.drop();
      // Claude's own errors come in Anthropic's shape; Vertex's (auth, quota, routing) in Google's
      return (body as { type?: unknown } | null)?.type === 'error' ? anthropicError(status, body, responseHeaders) : googleError('Vertex AI', status, body, responseHeaders);
    },
  };
}

export default definePlugin<'provider', Record<string, never>, Provider>({
  kind: 'provider',
  id: 'vertex-ai',
  apiVersion: 1,
  optionsSchema: { type: 'object', properties: {}, additionalProperties: false },
  create: (_options, deps, context) => createVertexProvider(deps.clock, deps.fetch, context?.provider),
});
