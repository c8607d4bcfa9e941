/**
 * The `bedrock` provider: models on Amazon Bedrock through the Converse API.
 *
 *   chat (JSON)       -> POST /model/{modelId}/converse
 *   chat (streaming)  -> POST /model/{modelId}/converse-stream, binary event-stream frames (event-stream.ts)
 *
 * Every request is signed with SigV4 (signing.ts) in `prepareRequest`, over the final bytes. The base URL
 * defaults to the region's bedrock-runtime endpoint (the region: `region`, else AWS_REGION,
 * else AWS_DEFAULT_REGION, else us-east-1); `baseUrl` points elsewhere (a VPC endpoint, a
 * proxy, a test server) and the signature still names the configured region.
 */
import { randomUUID } from 'node:crypto';
import { definePlugin, withConfiguredHeaders, type Clock, type HttpOperation, type PreparedRequest, type Provider, type ProviderConfig, type ProviderTarget, type ChatRequest } from '../../core/plugins/sdk';
import { EVENT_STREAM_CONTENT_TYPE, EventStreamDecoder } from './event-stream';
import { bedrockError } from './errors';
import { converseRequestFromChat } from './request';
import { chatResponseFromConverse } from './response';
import { credentialSource, createSigner, signRequest } from './signing';
import { chatFramesFromConverseEvent, endOfConverseStream } from './stream';

export const DEFAULT_REGION = 'us-east-1';

export function regionOf(provider: ProviderConfig<string>): string {
  return provider.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? DEFAULT_REGION;
}

function createBedrockProvider(clock: Clock, entry: ProviderConfig<string> | undefined): Provider {
  /** one signer per provider entry: its credential chain caches and refreshes what it found */
  const signers = new Map<string, ReturnType<typeof createSigner>>();
  function signerFor(provider: ProviderConfig<string>) {
    let signer = signers.get(provider.id);
    if (!signer) {
      signer = createSigner(regionOf(provider), credentialSource(provider));
      signers.set(provider.id, signer);
    }
    return signer;
  }

  // the entry's credentials are checked at boot (keys given by halves stop it)
  if (entry) signerFor(entry);

  const chat: HttpOperation<ChatRequest> = {
    toUpstream(request, target) {
      const body = converseRequestFromChat(request, target.model.model);
      const headers = withConfiguredHeaders({ 'content-type': 'application/json', accept: request.stream ? EVENT_STREAM_CONTENT_TYPE : 'application/json' }, target);
      return { path: `/model/${encodeURIComponent(target.model.model)}/${request.stream ? 'converse-stream' : 'converse'}`, method: 'POST', headers, body: JSON.stringify(body) };
    },
    fromUpstream: (body, target) => chatResponseFromConverse(body, target.model.model, `chatcmpl-${randomUUID()}`, Math.floor(clock.now() / 1000)),
    streamDecoder: (contentType) => (contentType.includes(EVENT_STREAM_CONTENT_TYPE) ? new EventStreamDecoder() : undefined),
    fromUpstreamEvent: (frame, state, target) => chatFramesFromConverseEvent(frame, state, target.model.model, `chatcmpl-${randomUUID()}`, Math.floor(clock.now() / 1000)),
    endOfStream: (state) => endOfConverseStream(state),
  };

  return {
    operations: { chat },
    // the region's endpoint; a baseUrl in the entry wins
    defaultBaseUrl: entry ? `https://bedrock-runtime.${regionOf(entry)}.amazonaws.com` : undefined,
    prepareRequest: (request: PreparedRequest, target: ProviderTarget) => signRequest(signerFor(target.provider), request),
    toError: (status, body, headers) => bedrockError(status, body, headers),
  };
}

export default definePlugin<'provider', Record<string, never>, Provider>({
  kind: 'provider',
  id: 'bedrock',
  apiVersion: 1,
  optionsSchema: { type: 'object', properties: {}, additionalProperties: false },
  create: (_options, deps, context) => createBedrockProvider(deps.clock, context?.provider),
});
