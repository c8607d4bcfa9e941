import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { FakeAnthropicUpstream } from '../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-client-passthrough-3c1f';
const GUARDED_KEY = 'sk-client-guarded-77de';

/**
 * A pass-through request goes upstream as the client wrote it, only the model renamed
 * (core/formats/body-with-model.ts); whatever could be read two ways, or was changed on the way, is
 * serialised again from what the gateway checked.
 */
describe('pass-through bodies: the client text with the model renamed', () => {
  let upstream: FakeOpenAI;
  let claude: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    claude = new FakeAnthropicUpstream('sk-claude-provider');
    await claude.start();
    gw = await testConfig()
      .withKey(KEY, { id: 'plain' })
      .withKey(GUARDED_KEY, { id: 'guarded', guardrails: ['mask-pii'] })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withModel('embed-test', { model: 'upstream-embed', kind: 'embedding' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: claude.url, apiKey: 'sk-claude-provider' })
      .withModel('claude-test', { model: 'claude-upstream' })
      .with({ guardrails: [{ id: 'mask-pii', engine: 'pii-mask', phase: 'pre' }], routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await claude.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
  });

  async function post(path: string, text: string, key = KEY): Promise<Response> {
    return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
  }

  it('sends a chat request byte for byte, spacing and number spelling kept, with the upstream model name', async () => {
    // as Python's json.dumps writes it: spaces after separators, 1.0 (JSON.stringify would write 1), \u escapes
    const text = '{"model": "gpt-test", "messages": [{"role": "user", "content": "caf\\u00e9 \u2014 ol\u00e9"}], "temperature": 1.0, "x_vendor": {"b": 1, "a": 2}}';
    const res = await post('/v1/chat/completions', text);
    expect(res.status).to.equal(200);
    expect(upstream.last.rawBody).to.equal(text.replace('"gpt-test"', '"upstream-model"'));
  });

  it('sends a stream request as written when it already asks for stream usage', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['a'], { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) };
    const text = '{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}],"top_p":1.00}';
    const res = await post('/v1/chat/completions', text);
    expect(res.status).to.equal(200);
    await res.text();
    expect(upstream.last.rawBody).to.equal(text.replace('"gpt-test"', '"upstream-model"'));
  });

  it('serialises a stream request again to ask for stream usage', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['a'], { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) };
    const res = await post('/v1/chat/completions', '{"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]}');
    await res.text();
    expect(upstream.last.rawBody).to.equal('{"model":"upstream-model","stream":true,"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}');
  });

  it('never sends the client text when a key could be read two ways: it serialises what it routed', async () => {
    for (const text of [
      '{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"model":"gpt-test"}',
      '{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"mod\\u0065l":"gpt-test"}',
      '{"messages":[{"role":"user","content":"hi"}],"model":"gpt-test"}',
    ]) {
      const res = await post('/v1/chat/completions', text);
      expect(res.status, text).to.equal(200);
      expect(upstream.last.rawBody, text).to.not.include('gpt-test');
      expect(upstream.last.body.model, text).to.equal('upstream-model');
    }
  });

  it('sends what an input guardrail masked, never the client text', async () => {
    const text = '{"model": "gpt-test", "messages": [{"role": "user", "content": "mail jane.doe@example.com"}]}';
    const res = await post('/v1/chat/completions', text, GUARDED_KEY);
    expect(res.status).to.equal(200);
    expect(upstream.last.rawBody).to.not.include('jane.doe@example.com');
    expect(upstream.last.body).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'user', content: 'mail [EMAIL]' }] });
  });

  it('sends an embeddings request as written', async () => {
    upstream.script = { kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'upstream-embed', usage: { prompt_tokens: 2, total_tokens: 2 } } };
    const text = '{"model": "embed-test", "input": ["a", "b"], "encoding_format": "float"}';
    const res = await post('/v1/embeddings', text);
    expect(res.status).to.equal(200);
    expect(upstream.last.rawBody).to.equal(text.replace('"embed-test"', '"upstream-embed"'));
  });

  it('sends a native Messages request as written to an Anthropic upstream', async () => {
    claude.reply({ json: readFixture('anthropic', 'cached-usage.upstream-response.json') });
    const text = '{"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}';
    const res = await fetch(`${gw.url}/native/v1/messages`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: text });
    expect(res.status).to.equal(200);
    expect(claude.last.rawBody).to.equal(text.replace('"claude-test"', '"claude-upstream"'));
  });

  it('an official SDK client gets its answer either way', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('ok');
    expect(JSON.parse(upstream.last.rawBody!)).to.deep.equal({ model: 'upstream-model', messages: [{ role: 'user', content: 'hi' }] });
  });
});
