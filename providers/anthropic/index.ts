/**
 * The `anthropic` provider: Claude models over the Messages API.
 *
 * - `messages` and `messages.count_tokens` are pass-through: the client's body goes upstream unchanged
 *   except for the model name, and answers (JSON or SSE frames) come back byte for byte.
 * - `chat` serves chat-completions clients by translation (translate.ts, stream.ts).
 *
 * Upstream auth is `x-api-key` plus `anthropic-version`; a client's `anthropic-version` and
 * `anthropic-beta` headers are passed on so features behind beta flags keep working (its betas beside
 * those the provider's `headers` set).
 */
import { bodyWithModel, definePlugin, withConfiguredHeaders, type Clock, type HttpOperation, type InboundInfo, type Provider, type ProviderTarget, type UpstreamRequest, type ChatRequest, type MessagesRequest } from '../../core/plugins/sdk';
import { chatResponseFromMessages, messagesRequestFromChat } from './translate';
import { chatFramesFromMessagesEvent } from './stream';
import { anthropicError } from './errors';

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicOptions {
  /** `anthropic-version` sent when the client sends none */
  version?: string;
}

export function createAnthropicProvider(options: AnthropicOptions, clock: Clock): Provider {
  const version = options.version ?? DEFAULT_ANTHROPIC_VERSION;

  function headers(target: ProviderTarget, inbound: InboundInfo): Record<string, string> {
    const out = withConfiguredHeaders({ 'content-type': 'application/json' }, target);
    if (target.provider.apiKey) out['x-api-key'] = target.provider.apiKey;
    out['anthropic-version'] = single(inbound.headers['anthropic-version']) ?? version;
    const beta = inbound.headers['anthropic-beta'];
    if (beta !== undefined) out['anthropic-beta'] = betaList(out['anthropic-beta'], Array.isArray(beta) ? beta.join(',') : beta);
    return out;
  }

  /** Operators may write the base URL with or without the /v1 suffix. */
  function path(target: ProviderTarget, rest: string): string {
    return /\/v1\/?$/.test(target.baseUrl) ? rest : `/v1${rest}`;
  }

  function passThrough(rest: string): HttpOperation<MessagesRequest, unknown> {
    return {
      toUpstream(request, target, inbound): UpstreamRequest {
        return { path: path(target, rest), method: 'POST', headers: headers(target, inbound), body: bodyWithModel(request, target.model.model, inbound) };
      },
      fromUpstream: (body) => body,
      // Frames pass through untouched. An `error` event is raised instead, so the core ends the stream
      // with exactly one error event in the gateway's mapping (and records the failure).
      fromUpstreamEvent: (frame) => {
        if (frame.event === 'error') throw anthropicError(undefined, frame.json);
        return frame;
      },
    };
  }

  const chat: HttpOperation<ChatRequest, unknown> = {
    toUpstream(request, target, inbound): UpstreamRequest {
      const body = messagesRequestFromChat(request, target.model.model);
      return { path: path(target, '/messages'), method: 'POST', headers: headers(target, inbound), body: JSON.stringify(body) };
    },
    fromUpstream: (body) => chatResponseFromMessages(body, Math.floor(clock.now() / 1000)),
    fromUpstreamEvent: (frame, state) => chatFramesFromMessagesEvent(frame, state, clock),
  };

  return {
    defaultBaseUrl: DEFAULT_BASE_URL,
    operations: {
      messages: passThrough('/messages'),
      'messages.count_tokens': passThrough('/messages/count_tokens'),
      chat,
    },
    toError: (status, body, responseHeaders) => anthropicError(status, body, responseHeaders),
  };
}

/**
 * The betas the operator set on the provider (its `headers`) and the client's own, each once: a client
 * that names any (Claude Code always does) must not switch off the ones the operator turned on for
 * everyone, nor lose its own.
 */
function betaList(configured: string | undefined, client: string): string {
  const names = new Set<string>();
  for (const list of [configured ?? '', client]) for (const name of list.split(',')) if (name.trim() !== '') names.add(name.trim());
  return [...names].join(',');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export default definePlugin<'provider', AnthropicOptions, Provider>({
  kind: 'provider',
  id: 'anthropic',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    properties: { version: { type: 'string', minLength: 1 } },
    additionalProperties: false,
  },
  create: (options, deps) => createAnthropicProvider(options ?? {}, deps.clock),
});
