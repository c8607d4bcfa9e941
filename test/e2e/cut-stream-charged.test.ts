/**
 * A stream the upstream cuts before its usage frame is still charged: the gateway estimates what the
 * upstream never reported from the request and the text streamed so far, and flags the log entry
 * `usageEstimated` (issue 14, point 4). Driven with the official SDKs against a fake upstream that
 * closes its socket mid-stream.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { FakeOpenAI, chatChunks } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-cut-stream-CANARY-9a4';
const PIECES = ['The launch ', 'plan is ', 'x'.repeat(400), ' and then'];

describe('a cut stream is charged by estimate', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  // the client sees the cut before the request settles, and log rows are written a turn later, in a batch
  const lastEntry = async () => {
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    return (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
  };

  it('chat completions (OpenAI SDK): the cut is reported, and the entry is charged and flagged', async () => {
    // the text chunks go out, then the socket closes: no finish chunk, no usage, no [DONE]
    upstream.script = { kind: 'sse', events: chatChunks(PIECES, { prompt_tokens: 50, completion_tokens: 120, total_tokens: 170 }), cutAfter: 1 + PIECES.length };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Tell me the plan for the launch.' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().then(() => undefined, (e) => e);
    expect(text).to.equal(PIECES.join(''));
    expect(err?.error?.code ?? err?.code).to.equal('upstream_stream_cut');
    const entry = await lastEntry();
    expect(entry).to.deep.include({ model: 'gpt-test', outcome: 'upstream_cut' });
    // about four characters a token: 430 streamed characters, a prompt of some 50
    expect(entry.completionTokens).to.be.within(100, 120);
    expect(entry.promptTokens).to.be.within(5, 40);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  /** A Responses stream whose only model round the upstream cuts: its events, cost trailer and log entry. */
  const cutResponse = async () => {
    upstream.script = { kind: 'sse', events: chatChunks(PIECES, { prompt_tokens: 50, completion_tokens: 120, total_tokens: 170 }), cutAfter: 1 + PIECES.length };
    const res = await request(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, input: 'Tell me the plan for the launch.' }),
    });
    const events = await res.body.text();
    expect(events).to.include('event: response.failed');
    expect(events).to.include('upstream_stream_cut');
    return { trailers: res.trailers, entry: await lastEntry() };
  };

  it('Responses (raw stream): the cost trailer is what the cut round was charged', async () => {
    const { trailers, entry } = await cutResponse();
    expect(entry).to.deep.include({ endpoint: 'responses', model: 'gpt-test', errorCode: 'upstream_stream_cut' });
    expect(entry.completionTokens).to.be.within(100, 120);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
    expect(trailers['x-gateway-response-cost']).to.equal(String(entry.cost));
  });

  it('Responses (raw stream): the log entry says the upstream cut the stream, as a chat stream\'s does', async () => {
    const { entry } = await cutResponse();
    expect(entry).to.deep.include({ endpoint: 'responses', outcome: 'upstream_cut', errorCode: 'upstream_stream_cut' });
  });

  /** The pieces, then OpenAI's mid-stream error frame: `data: {"error": {...}}` and no [DONE]. */
  const failingChat = () => [
    ...chatChunks(PIECES).slice(0, 1 + PIECES.length),
    { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } },
  ];

  it('chat completions (OpenAI SDK): an error event mid-stream is logged as the stream\'s error, and what was streamed is charged', async () => {
    upstream.script = { kind: 'sse', events: failingChat(), done: false };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Tell me the plan for the launch.' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().then(() => undefined, (e) => e);
    expect(text).to.equal(PIECES.join(''));
    // the client reads the upstream's own error
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect(err.message).to.include('The server had an error while processing your request.');
    const entry = await lastEntry();
    expect(entry).to.deep.include({ model: 'gpt-test', outcome: 'stream_error', errorCode: 'upstream_stream_error', status: 502 });
    expect(entry.completionTokens).to.be.within(100, 120);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  it('chat completions (raw stream): one error frame ends the stream, with the upstream\'s message and no [DONE] after it', async () => {
    upstream.script = { kind: 'sse', events: failingChat() };
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Tell me the plan for the launch.' }] }),
    });
    const frames = (await res.body.text()).split('\n\n').filter(Boolean);
    const last = JSON.parse(frames[frames.length - 1].replace(/^data: /, ''));
    expect(last.error).to.include({ code: 'upstream_stream_error' });
    expect(last.error.message).to.include('The server had an error while processing your request.');
    expect(frames.filter((f) => f.includes('"error"'))).to.have.length(1);
    const entry = await lastEntry();
    expect(entry).to.deep.include({ outcome: 'stream_error', errorCode: 'upstream_stream_error' });
    expect(res.trailers['x-gateway-response-cost']).to.equal(String(entry.cost));
    expect(entry.cost).to.be.greaterThan(0);
  });

  it('Responses (OpenAI SDK): a round whose upstream sends an error event mid-stream fails the response, logged and charged', async () => {
    // some servers send [DONE] after their error frame: the answer is still not complete
    upstream.script = { kind: 'sse', events: failingChat() };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-test', stream: true, input: 'Tell me the plan for the launch.' });
    const types: string[] = [];
    const err = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().then(() => undefined, (e) => e);
    expect(types).to.not.include('response.completed');
    expect(types.includes('response.failed') || err !== undefined).to.equal(true);
    const entry = await lastEntry();
    expect(entry).to.deep.include({ endpoint: 'responses', model: 'gpt-test', outcome: 'stream_error', errorCode: 'upstream_stream_error' });
    expect(entry.completionTokens).to.be.within(100, 120);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  it('Messages translated from chat (Anthropic SDK): the same, from the translated events', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(PIECES, { prompt_tokens: 50, completion_tokens: 120, total_tokens: 170 }), cutAfter: 1 + PIECES.length };
    const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: KEY, maxRetries: 0 });
    const stream = client.messages.stream({ model: 'gpt-test', max_tokens: 1024, messages: [{ role: 'user', content: 'Tell me the plan for the launch.' }] });
    const err = await stream.finalMessage().then(() => undefined, (e) => e);
    expect(err).to.be.an('error');
    const entry = await lastEntry();
    expect(entry).to.deep.include({ model: 'gpt-test', outcome: 'upstream_cut' });
    expect(entry.completionTokens).to.be.within(100, 120);
    expect(entry.promptTokens).to.be.within(5, 40);
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });
});
