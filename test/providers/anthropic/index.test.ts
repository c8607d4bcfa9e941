import { expect } from 'chai';
import plugin, { createAnthropicProvider } from '../../../providers/anthropic/index';
import type { HttpOperation, ProviderTarget } from '../../../core/plugins/contracts';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { readFixture } from '../../support/fixtures';

const clock = { now: () => 1700000000_000 };

function target(baseUrl = 'https://api.anthropic.com'): ProviderTarget {
  return {
    model: { id: 'anthropic/claude', name: 'claude', provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' },
    provider: { id: 'anthropic', type: 'anthropic', apiKey: 'sk-ant-provider-key', headers: { 'X-Team': 'blue' } },
    baseUrl,
  };
}

describe('anthropic provider plugin', () => {
  const provider = createAnthropicProvider({}, clock);
  const messages = provider.operations.messages as HttpOperation;

  it('is a provider plugin with id "anthropic" and the public default base URL', () => {
    expect({ kind: plugin.kind, id: plugin.id, apiVersion: plugin.apiVersion, defaultBaseUrl: provider.defaultBaseUrl }).to.deep.equal({
      kind: 'provider',
      id: 'anthropic',
      apiVersion: 1,
      defaultBaseUrl: 'https://api.anthropic.com',
    });
    expect(Object.keys(provider.operations)).to.have.members(['messages', 'messages.count_tokens', 'chat']);
  });

  it('passes a Messages body through unchanged except the model, with x-api-key, anthropic-version and anthropic-beta', () => {
    const body = {
      model: 'claude',
      max_tokens: 100,
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', content: 'hi' }],
      thinking: { type: 'enabled', budget_tokens: 2000 },
      top_k: 5,
      a_field_from_the_future: { x: 1 },
    };
    const upstream = messages.toUpstream(body, target(), { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'anthropic-version': '2023-06-01', 'user-agent': 'sdk' } });
    expect({ ...upstream, body: JSON.parse(upstream.body as string) }).to.deep.equal({
      path: '/v1/messages',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-team': 'blue',
        'x-api-key': 'sk-ant-provider-key',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'prompt-caching-2024-07-31',
      },
      body: { ...body, model: 'claude-sonnet-4-5-20250929' },
    });
  });

  it('sends its default anthropic-version when the client sends none, and accepts a base URL ending in /v1', () => {
    const upstream = (provider.operations['messages.count_tokens'] as HttpOperation).toUpstream(
      { model: 'claude', messages: [{ role: 'user', content: 'hi' }] },
      target('https://proxy.example.com/anthropic/v1'),
      { headers: {} },
    );
    expect({ path: upstream.path, version: upstream.headers['anthropic-version'], beta: upstream.headers['anthropic-beta'] }).to.deep.equal({
      path: '/messages/count_tokens',
      version: '2023-06-01',
      beta: undefined,
    });
  });

  it('translates a chat request and its answer', () => {
    const chat = provider.operations.chat as HttpOperation;
    const upstream = chat.toUpstream(readFixture('anthropic', 'images.chat-request.json'), target(), { headers: {} });
    expect({ path: upstream.path, body: JSON.parse(upstream.body as string) }).to.deep.equal({
      path: '/v1/messages',
      body: readFixture('anthropic', 'images.upstream-request.json'),
    });
    expect(chat.fromUpstream(readFixture('anthropic', 'cached-usage.upstream-response.json'), target(), {})).to.deep.equal(
      readFixture('anthropic', 'cached-usage.chat-response.json'),
    );
  });

  it('passes stream frames of the native format through as the same objects', () => {
    const frame = SseFrame.fromRaw('{"type":"ping"}', 'ping');
    expect(messages.fromUpstreamEvent!(frame, {}, target())).to.equal(frame);
  });

  it('maps upstream errors through toError', () => {
    const err = provider.toError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, {});
    expect({ status: err.status, code: err.code }).to.deep.equal({ status: 503, code: 'upstream_overloaded' });
  });
});

describe('anthropic provider plugin: an error event inside a pass-through stream', () => {
  it('is raised as a GatewayError so the stream ends with one error event', () => {
    const messages = createAnthropicProvider({}, clock).operations.messages as HttpOperation;
    const frame = SseFrame.fromRaw('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'error');
    let thrown: any;
    try {
      messages.fromUpstreamEvent!(frame, {}, target());
    } catch (err) {
      thrown = err;
    }
    expect({ status: thrown?.status, code: thrown?.code }).to.deep.equal({ status: 503, code: 'upstream_overloaded' });
  });
});
