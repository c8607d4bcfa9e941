/**
 * Example provider plugin: serves chat completions from the (fictional) Acme LLM API, whose wire format
 * differs from OpenAI's. A provider only translates: the gateway owns the HTTP connection, timeouts,
 * retries, fallbacks, spend and guardrails. Clients keep using the OpenAI (or Anthropic) API.
 *
 * In your own package, import from 'model-gateway/sdk' instead of '../../core/plugins/sdk'.
 */
import {
  GatewayError,
  InvalidRequestError,
  RateLimitError,
  SseFrame,
  UpstreamError,
  definePlugin,
  type ChatRequest,
  type HttpOperation,
  type Provider,
} from '../../core/plugins/sdk';
import { finishReason, fromAcme, toAcme } from './translate';
import type { AcmeError, AcmeEvent, AcmeResponse } from './wire';

export interface AcmeOptions {
  /** max_new_tokens when the client sets no limit (default 1024) */
  defaultMaxTokens?: number;
}

export default definePlugin<'provider', AcmeOptions, Provider>({
  kind: 'provider',
  id: 'acme-llm',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { defaultMaxTokens: { type: 'integer', minimum: 1, default: 1024 } },
  },
  create(options, deps) {
    const maxTokens = options.defaultMaxTokens ?? 1024;
    const chat: HttpOperation<ChatRequest, unknown> = {
      toUpstream(request, target) {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...target.provider.headers };
        if (target.provider.apiKey) headers['x-acme-key'] = target.provider.apiKey;
        return { path: '/v2/generate', headers, body: JSON.stringify(toAcme(request, target.model.model, maxTokens)) };
      },
      fromUpstream: (body: AcmeResponse, target) => fromAcme(body, target.model.name, Math.floor(deps.clock.now() / 1000)),
      // One Acme event in, OpenAI chunk frames out. `state` lives for one stream.
      fromUpstreamEvent(frame, state, target) {
        const event = frame.json as AcmeEvent;
        const base = {
          id: (state.id ??= `chatcmpl-acme-${deps.clock.now()}`),
          object: 'chat.completion.chunk',
          created: Math.floor(deps.clock.now() / 1000),
          model: target.model.name,
        };
        if (event.type === 'token') {
          const delta = state.started ? { content: event.text } : { role: 'assistant', content: event.text };
          state.started = true;
          return SseFrame.fromJson({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
        }
        if (event.type === 'done') {
          const { input_tokens: prompt, output_tokens: completion } = event.usage;
          return [
            SseFrame.fromJson({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finishReason(event.stop) }] }),
            // the gateway prices the stream from this chunk (and hides it from clients that did not ask)
            SseFrame.fromJson({ ...base, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }),
            SseFrame.fromRaw('[DONE]'),
          ];
        }
        return null;
      },
    };
    return {
      defaultBaseUrl: 'https://api.acme.example',
      operations: { chat },
      // Turn Acme's errors into the gateway's. Never echo credentials or the upstream URL.
      toError(status, body): GatewayError {
        const detail = (body as AcmeError | undefined)?.error?.detail ?? `Acme answered ${status}.`;
        if (status === 400) return new InvalidRequestError(detail, 'upstream_invalid_request');
        if (status === 429) return new RateLimitError('Acme is rate limiting this deployment.', 'upstream_rate_limited');
        if (status === 401 || status === 403) return new UpstreamError('The gateway could not authenticate to Acme.', 'upstream_auth_failed');
        return new UpstreamError('Acme failed to answer.', 'upstream_error');
      },
    };
  },
});
