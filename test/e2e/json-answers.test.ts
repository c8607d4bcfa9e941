import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { eventually } from '../support/eventually';

const CLIENT_KEY = 'sk-client-CANARY-4c2f';

/**
 * Answers the client did not ask to stream: the gateway reads them whole (undici dispatch with a gathering
 * handler, core/upstream/gathered-answer.ts). Checked through the gateway with the openai SDK and fetch.
 */
describe('JSON (not streamed) answers through the gateway', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withOpenAI('oai', upstream, 'sk-provider-CANARY-4c2f')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({ routing: { retries: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('passes a JSON answer through byte for byte, non-ASCII text included, and prices it', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Grüße, 世界 — ok', { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }) };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await res.text()).to.equal(JSON.stringify(chatCompletion('Grüße, 世界 — ok', { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 })));
    // 1000 input tokens at $1/M + 500 output tokens at $2/M
    expect(res.headers.get('x-gateway-response-cost')).to.equal('0.002');
  });

  it('answers 502 upstream_bad_response when a 200 answer is not JSON, and logs it', async () => {
    upstream.script = { kind: 'raw', status: 200, body: '<html>maintenance</html>' };
    const err = (await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).to.equal(502);
    expect((err.error as { code?: string }).code).to.equal('upstream_bad_response');
    await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.errorCode === 'upstream_bad_response', 5000);
  });

  it('gives up an answer that never ends at 256 MiB with a 502 upstream_bad_response, closing the upstream connection', async () => {
    upstream.script = { kind: 'endless', contentType: 'application/json', start: '{"id":"', fill: 'a' };
    const closed = upstream.clientClosed;
    const err = (await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).to.equal(502);
    expect(err.error).to.deep.include({ code: 'upstream_bad_response', message: "The upstream's answer is larger than 256 MiB." });
    await eventually(async () => upstream.clientClosed > closed, 5000);
  });

  it('gives up a stream event that never ends at 64 MiB with a 502 upstream_bad_response', async () => {
    upstream.script = { kind: 'endless', contentType: 'text/event-stream', start: 'data: {"choices":[{"delta":{"content":"', fill: 'a' };
    const closed = upstream.clientClosed;
    const err = (await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).to.equal(502);
    expect(err.error).to.deep.include({ code: 'upstream_bad_response', message: 'The upstream sent an event of more than 64 MiB.' });
    await eventually(async () => upstream.clientClosed > closed, 5000);
  });

  // the client's own timeout only bounds a gateway that would read on (600 s, gigabytes) if the limit did not hold
  it('gives up at 256 MiB a JSON answer that never ends to a client that asked for a stream, closing the upstream connection', async () => {
    upstream.script = { kind: 'endless', contentType: 'application/json', start: '{"id":"', fill: 'a' };
    const closed = upstream.clientClosed;
    const err = (await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'x' }] }, { timeout: 15_000 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).to.equal(502);
    expect(err.error).to.deep.include({ code: 'upstream_bad_response', message: "The upstream's answer is larger than 256 MiB." });
    await eventually(async () => upstream.clientClosed > closed, 5000);
  });

  it('stops reading an error answer that never ends at 256 MiB, for a client that asked for a stream, and answers with the upstream\'s status', async () => {
    upstream.script = { kind: 'endless', status: 500, contentType: 'text/plain', start: 'Internal error: ', fill: 'a' };
    const closed = upstream.clientClosed;
    const err = (await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'x' }] }, { timeout: 15_000 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).to.equal(502);
    expect((err.error as { code?: string }).code).to.equal('upstream_error');
    await eventually(async () => upstream.clientClosed > closed, 5000);
  });

  it('cancels the upstream request when the client leaves while the answer is awaited', async () => {
    upstream.script = { kind: 'hang' };
    const before = upstream.clientClosed;
    const requests = upstream.requests.length;
    const leaving = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      signal: leaving.signal,
    }).catch(() => 'left');
    await eventually(() => upstream.requests.length > requests, 5000);
    leaving.abort();
    expect(await pending).to.equal('left');
    await eventually(() => upstream.clientClosed > before, 5000);
    await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.outcome === 'client_abort', 5000);
  });
});
