import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { fakeVertex, googleError } from '../providers/gemini/fake-google-upstream';
import { FakeTokenEndpoint } from '../providers/vertex-ai/fake-token-endpoint';
import { json, sse, type Answer, type CloudUpstream, type RecordedRequest } from '../providers/cloud-upstream';
import { textEvents } from '../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rejection, streamTrailers } from './cloud-support';

const CLIENT_KEY = 'sk-client-vertex-CANARY-42';
const NOW_MS = 1700000000_000;
const PROJECT_PATH = '/v1/projects/my-project/locations/europe-west4';
const CLAUDE = 'claude-sonnet-4-5@20250929';

/**
 * Vertex AI's `:predict` for text embedding models, with its per-call input limits: gemini-embedding-*
 * takes one instance a call ("batchSize must be 1"), the text-embedding models 250, and no call more than
 * 20,000 tokens in all. Each vector is
 * [input length, dimensions asked], each input one token a word. The answer to an input starting
 * "slow" comes late, so answers arrive out of the order they were asked in.
 */
function vertexEmbeddings(request: RecordedRequest): Answer {
  const model = /\/models\/([^/:]+):predict$/.exec(request.path)?.[1] ?? '';
  const max = model.startsWith('gemini-embedding') ? 1 : 250;
  const instances = request.body.instances as { content: string }[];
  if (instances.length > max) {
    return json(googleError(400, `Unable to submit request because batchSize must be ${max} but the entered value was ${instances.length}.`, 'INVALID_ARGUMENT'), 400);
  }
  const tokens = instances.reduce((sum, i) => sum + i.content.split(' ').length, 0);
  if (tokens > 20_000) {
    return json(googleError(400, `Unable to submit request because the input token count is ${tokens} but the model supports up to 20000. Reduce the input token count and try again.`, 'INVALID_ARGUMENT'), 400);
  }
  const dimensions = request.body.parameters?.outputDimensionality ?? 0;
  const answer = json({ predictions: instances.map((i) => ({ embeddings: { values: [i.content.length, dimensions], statistics: { token_count: i.content.split(' ').length, truncated: false } } })) });
  return async (res, req) => {
    if (instances[0]?.content.startsWith('slow')) await new Promise((r) => setTimeout(r, 50));
    await answer(res, req);
  };
}

describe('vertex-ai provider end to end (service-account OAuth against a fake token endpoint, fake Vertex AI)', () => {
  let tokens: FakeTokenEndpoint;
  let upstream: CloudUpstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let serviceAccount: string;
  const revoked = new Set<string>();

  before(async () => {
    tokens = await new FakeTokenEndpoint().start();
    // a token is good once issued, until the test revokes it
    upstream = await fakeVertex((token) => tokens.issued.includes(token) && !revoked.has(token)).start();
    serviceAccount = tokens.serviceAccountJson();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'app' })
      .withProvider({ id: 'vertex', type: 'vertex-ai', baseUrl: `${upstream.url}/v1`, project: 'my-project', location: 'europe-west4', credentials: serviceAccount })
      .withModel('gemini-pro', { model: 'gemini-2.5-pro', price: { inputPerMTok: 1.25, outputPerMTok: 10 } })
      .withModel('claude-vertex', { model: CLAUDE, price: { inputPerMTok: 3, outputPerMTok: 15 } })
      .withModel('vertex-embed', { model: 'text-embedding-005', kind: 'embedding', price: { inputPerMTok: 0.1 } })
      .withModel('gemini-embed', { model: 'gemini-embedding-001', kind: 'embedding', price: { inputPerMTok: 0.15 } })
      // a second entry with the same key: its own token cache, for the refresh test
      .withProvider({ id: 'vertex-short', type: 'vertex-ai', baseUrl: `${upstream.url}/v1`, project: 'my-project', location: 'europe-west4', credentials: serviceAccount })
      .withModel('gemini-short', { model: 'gemini-2.5-pro' })
      .with({ routing: { retries: 0 } })
      .start({ clock: { now: () => NOW_MS } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await tokens.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('exchanges a signed JWT at the key file\u2019s token_uri, sends the token as a bearer, and caches it', async () => {
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    const issuedBefore = tokens.issued.length;
    const { data, response } = await openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'Sky colour?' }] }).withResponse();
    await openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'Again?' }] });
    expect(tokens.issued.length - issuedBefore, 'one token exchange for two requests').to.equal(1);
    expect(tokens.assertions.at(-1)).to.include({ iss: 'gateway@test-project.iam.gserviceaccount.com', scope: 'https://www.googleapis.com/auth/cloud-platform' });
    expect(upstream.requests.map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${tokens.issued.at(-1)}`, `Bearer ${tokens.issued.at(-1)}`]);
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/google/models/gemini-2.5-pro:generateContent`);
    expect(upstream.last.body).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'Again?' }] }] });
    expect(data.choices[0].message.content).to.equal('The sky is blue.');
    // 1200 input x $1.25 + 45 output x $10, per million (no cache price: cached tokens at the input price)
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00195');
  });

  it('fetches a new token when the cached one is about to expire, and Vertex accepts only the new one', async () => {
    upstream.reply(() => json(readFixture('gemini', 'max-tokens.upstream-response.json')));
    tokens.expiresIn = 60; // inside the library's refresh margin: the next request refreshes
    try {
      await openai.chat.completions.create({ model: 'gemini-short', messages: [{ role: 'user', content: 'one' }] });
      const first = tokens.issued.at(-1)!;
      expect(upstream.last.headers.authorization).to.equal(`Bearer ${first}`);
      revoked.add(first);
      await openai.chat.completions.create({ model: 'gemini-short', messages: [{ role: 'user', content: 'two' }] });
      expect(tokens.issued.at(-1)).to.not.equal(first);
      expect(upstream.last.headers.authorization).to.equal(`Bearer ${tokens.issued.at(-1)}`);
    } finally {
      tokens.expiresIn = 3600;
    }
  });

  it('streams Gemini on Vertex with alt=sse and prices the stream', async () => {
    upstream.reply(() => sse(readFixture('gemini', 'text.upstream-stream.json')));
    const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'gemini-pro', stream: true, messages: [{ role: 'user', content: 'Sky?' }] }, CLIENT_KEY);
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`);
    expect(raw.text).to.include('" is blue."');
    // 9 input x $1.25 + 16 output (4 answer + 12 thinking) x $10, per million
    expect(raw.trailers['x-gateway-response-cost']).to.equal('0.00017125');
  });

  it('sends Claude through rawPredict with the Vertex anthropic_version and no model in the body', async () => {
    upstream.reply(() => json(readFixture('anthropic', 'tool-use.upstream-response.json')));
    const request = readFixture('anthropic', 'tool-round-trip.chat-request.json');
    const { data, response } = await openai.chat.completions.create({ ...request, model: 'claude-vertex' }).withResponse();
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/anthropic/models/${encodeURIComponent(CLAUDE)}:rawPredict`);
    const { model: _model, ...expected } = readFixture('anthropic', 'tool-round-trip.upstream-request.json');
    expect(upstream.last.body).to.deep.equal({ anthropic_version: 'vertex-2023-10-16', ...expected });
    expect(upstream.last.headers['x-api-key']).to.equal(undefined);
    expect(data).to.deep.equal(readFixture('anthropic', 'tool-use.chat-response.json'));
    expect(Number(response.headers.get('x-gateway-response-cost'))).to.be.greaterThan(0);
  });

  it('answers a Claude request that is only a system message (OpenAI takes one; Claude refuses one without messages) with the message as the prompt', async () => {
    upstream.reply((request) => {
      if (!Array.isArray(request.body.messages) || request.body.messages.length === 0) {
        return json({ type: 'error', error: { type: 'invalid_request_error', message: 'messages: at least one message is required' } }, 400);
      }
      return json(readFixture('anthropic', 'text.upstream-response.json'));
    });
    const data = await openai.chat.completions.create({ model: 'claude-vertex', messages: [{ role: 'system', content: 'Write a haiku about the sea.' }] });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(upstream.last.body.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Write a haiku about the sea.' }] }]);
    expect(upstream.last.body.system).to.equal(undefined);
  });

  it('refuses a gs:// image link, which Vertex would read with the gateway\u2019s own service account, with a 400 naming the part', async () => {
    // a client of one organisation must not have the operator's credentials read the operator's buckets for it
    const err = await rejection(
      openai.chat.completions.create({
        model: 'gemini-pro',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'gs://operator-private/scan.png' } }] }],
      }),
    );
    expect({ status: err.status, code: err.error.code, param: err.error.param }).to.deep.equal({ status: 400, code: 'invalid_request', param: 'messages[0].content[1].image_url.url' });
    expect(err.error.message).to.include('gs://');
    expect(upstream.requests).to.have.length(0);
  });

  it('refuses an image link for Claude, which takes images on Vertex only as base64, with a 400 naming the part; an inline image goes as base64', async () => {
    // Google-managed Claude reads no URL image sources (Anthropic\u2019s vision guide: base64 only): the fake refuses them
    upstream.reply((request) => {
      const blocks = (request.body.messages as { content: { type: string; source?: { type: string } }[] }[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      if (blocks.some((b) => b.type === 'image' && b.source?.type !== 'base64')) return json({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content.1.image.source: Input tag \'url\' found using \'type\' does not match any of the expected tags: \'base64\'' } }, 400);
      return json(readFixture('anthropic', 'text.upstream-response.json'));
    });
    const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const err = await rejection(
      openai.chat.completions.create({
        model: 'claude-vertex',
        messages: [
          { role: 'system', content: 'Describe images.' },
          { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
        ],
      }),
    );
    expect({ status: err.status, code: err.error.code, param: err.error.param }).to.deep.equal({ status: 400, code: 'invalid_request', param: 'messages[1].content[2].image_url.url' });
    expect(err.error.message).to.include('base64');
    expect(upstream.requests).to.have.length(0);

    const data = await openai.chat.completions.create({ model: 'claude-vertex', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }] });
    expect(data.choices[0].message.content).to.be.a('string');
    expect(upstream.last.body.messages[0].content[1]).to.deep.equal({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
  });

  it('streams Claude through streamRawPredict: the openai SDK assembles the tool calls, the anthropic SDK the text', async () => {
    upstream.reply(() => sse(readFixture('anthropic', 'tool-use.upstream-stream.json')));
    const completion = await openai.chat.completions.stream({ model: 'claude-vertex', messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] }).finalChatCompletion();
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/anthropic/models/${encodeURIComponent(CLAUDE)}:streamRawPredict`);
    expect(upstream.last.body.stream).to.equal(true);
    expect(completion.choices[0].message.tool_calls?.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : c))).to.deep.equal([
      ['get_weather', { city: 'Paris' }],
      ['get_time', {}],
    ]);

    upstream.reply(() => sse(textEvents('msg_v1', CLAUDE, ['Hel', 'lo'], { input_tokens: 1000, output_tokens: 100 })));
    const message = await anthropic.messages.stream({ model: 'claude-vertex', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content.map((b) => (b.type === 'text' ? b.text : b.type))).to.deep.equal(['Hello']);
    const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'claude-vertex', stream: true, messages: [{ role: 'user', content: 'hi' }] }, CLIENT_KEY);
    // 1000 input x $3 + 100 output x $15, per million
    expect(raw.trailers['x-gateway-response-cost']).to.equal('0.0045');
  });

  it('tells a Messages client which stop sequence ended Claude\u2019s answer on Vertex (stop_reason stop_sequence), JSON and streamed', async () => {
    upstream.reply(() => json(readFixture('anthropic', 'stop-sequence.upstream-response.json')));
    const data = await anthropic.messages.create({ model: 'claude-vertex', max_tokens: 50, stop_sequences: ['STOP', 'END'], messages: [{ role: 'user', content: 'Count to three, then say END.' }] });
    expect(upstream.last.body.stop_sequences).to.deep.equal(['STOP', 'END']);
    expect({ stop_reason: data.stop_reason, stop_sequence: data.stop_sequence }).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'END' });

    const events = textEvents('msg_v2', CLAUDE, ['1, 2, 3']).map((e) => (e.event === 'message_delta' ? { ...e, data: { ...e.data, delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' } } } : e));
    upstream.reply(() => sse(events));
    const streamed = await anthropic.messages.stream({ model: 'claude-vertex', max_tokens: 50, stop_sequences: ['STOP', 'END'], messages: [{ role: 'user', content: 'Count to three, then say END.' }] }).finalMessage();
    expect({ stop_reason: streamed.stop_reason, stop_sequence: streamed.stop_sequence }).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
  });

  it('embeds through predict, priced from the token counts Vertex reports', async () => {
    upstream.reply(() => json({ predictions: [{ embeddings: { values: [1, 2], statistics: { token_count: 3, truncated: false } } }, { embeddings: { values: [3, 4], statistics: { token_count: 5, truncated: false } } }] }));
    const { data, response } = await openai.embeddings.create({ model: 'vertex-embed', input: ['a b', 'c d e'] }).withResponse();
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/google/models/text-embedding-005:predict`);
    expect(upstream.last.body).to.deep.equal({ instances: [{ content: 'a b' }, { content: 'c d e' }] });
    expect(data.data.map((d) => d.embedding)).to.deep.equal([
      [1, 2],
      [3, 4],
    ]);
    expect(data.usage.prompt_tokens).to.equal(8);
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.0000008');
  });

  it('embeds several inputs with gemini-embedding-001, which takes one a call: one predict each, the vectors in input order, usage summed', async () => {
    upstream.reply(vertexEmbeddings);
    const input = ['slow first input', 'second', 'the third one'];
    const { data, response } = await openai.embeddings.create({ model: 'gemini-embed', input, dimensions: 8 }).withResponse();
    expect(upstream.requests.map((r) => r.path)).to.deep.equal(input.map(() => `${PROJECT_PATH}/publishers/google/models/gemini-embedding-001:predict`));
    expect(upstream.requests.map((r) => r.body).sort((a, b) => a.instances[0].content.localeCompare(b.instances[0].content))).to.deep.equal(
      [...input].sort().map((content) => ({ instances: [{ content }], parameters: { outputDimensionality: 8 } })),
    );
    expect(data.data.map((d) => [d.index, d.embedding])).to.deep.equal([
      [0, [16, 8]],
      [1, [6, 8]],
      [2, [13, 8]],
    ]);
    expect(data.usage).to.deep.equal({ prompt_tokens: 7, total_tokens: 7 });
    // 7 input tokens x $0.15 per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00000105');
  });

  it('a split embedding request with one part refused is refused whole, in the part\u2019s error', async () => {
    upstream.reply((request) =>
      request.body.instances[0].content === 'over quota' ? json(googleError(429, 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.', 'RESOURCE_EXHAUSTED'), 429) : vertexEmbeddings(request),
    );
    const err = await rejection(openai.embeddings.create({ model: 'gemini-embed', input: ['fine', 'over quota', 'also fine'] }));
    expect(err.status).to.equal(429);
    expect(err.error.message).to.include('Quota exceeded');
  });

  it('embeds 251 inputs with text-embedding-005, which takes 250 a call, in two predict calls', async () => {
    upstream.reply(vertexEmbeddings);
    const input = Array.from({ length: 251 }, (_, i) => `input ${i}`);
    const data = await openai.embeddings.create({ model: 'vertex-embed', input });
    expect(upstream.requests.map((r) => r.body.instances.length).sort()).to.deep.equal([1, 250]);
    expect(data.data.map((d) => d.index)).to.deep.equal(input.map((_, i) => i));
    expect(data.data.map((d) => d.embedding[0])).to.deep.equal(input.map((text) => text.length));
    expect(data.usage.prompt_tokens).to.equal(502);
  });

  it('embeds 250 inputs of 100 tokens with text-embedding-005, over the 20,000 tokens a predict call takes, in calls under it', async () => {
    upstream.reply(vertexEmbeddings);
    // a RAG ingestion: chunks of a few hundred words, as many as the client batches
    const input = Array.from({ length: 250 }, (_, i) => `chunk ${i} ${'word '.repeat(97)}end`);
    const data = await openai.embeddings.create({ model: 'vertex-embed', input });
    expect(upstream.requests.every((r) => r.body.instances.reduce((sum: number, i: { content: string }) => sum + i.content.split(' ').length, 0) <= 20_000)).to.equal(true);
    expect(upstream.requests.reduce((sum, r) => sum + r.body.instances.length, 0)).to.equal(250);
    expect(data.data.map((d) => d.index)).to.deep.equal(input.map((_, i) => i));
    expect(data.data.map((d) => d.embedding[0])).to.deep.equal(input.map((text) => text.length));
    expect(data.usage.prompt_tokens).to.equal(25_000);
  });

  it('reads a streamed call\u2019s error in Google\u2019s array form: a prompt over the context window is context_length_exceeded, a 429 keeps RetryInfo\u2019s pause', async () => {
    // streamGenerateContent answers its errors as the stream's array form, `[{"error": {...}}]`, alt=sse or not
    const tooLong = 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).';
    upstream.reply(() => json([googleError(400, tooLong, 'INVALID_ARGUMENT')], 400));
    const long = await rejection(openai.chat.completions.create({ model: 'gemini-pro', stream: true, messages: [{ role: 'user', content: 'a very long prompt' }] }));
    expect(upstream.last.path).to.equal(`${PROJECT_PATH}/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`);
    expect({ status: long.status, code: long.error.code, message: long.error.message }).to.deep.equal({ status: 400, code: 'context_length_exceeded', message: tooLong });

    const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '20s' };
    upstream.reply(() => json([googleError(429, 'Resource exhausted. Please try again later.', 'RESOURCE_EXHAUSTED', [retryInfo])], 429));
    const limited = await rejection(anthropic.messages.create({ model: 'gemini-pro', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    expect({ status: limited.status, type: limited.error.error.type, retryAfter: limited.headers.get('retry-after') }).to.deep.equal({ status: 429, type: 'rate_limit_error', retryAfter: '20' });
    expect(limited.error.error.message).to.include('Resource exhausted. Please try again later.');
  });

  it('a deadline Vertex gives up on (504 DEADLINE_EXCEEDED) is the gateway\u2019s 504 upstream_timeout, for Gemini and Claude, JSON and streamed', async () => {
    upstream.reply(() => json(googleError(504, 'Deadline expired before operation could complete.', 'DEADLINE_EXCEEDED'), 504));
    const seen: unknown[] = [];
    for (const model of ['gemini-pro', 'claude-vertex']) {
      for (const stream of [false, true]) {
        const err = await rejection(openai.chat.completions.create({ model, stream, messages: [{ role: 'user', content: 'hi' }] }));
        seen.push({ model, stream, status: err.status, code: err.error.code });
      }
    }
    expect(seen).to.deep.equal([
      { model: 'gemini-pro', stream: false, status: 504, code: 'upstream_timeout' },
      { model: 'gemini-pro', stream: true, status: 504, code: 'upstream_timeout' },
      { model: 'claude-vertex', stream: false, status: 504, code: 'upstream_timeout' },
      { model: 'claude-vertex', stream: true, status: 504, code: 'upstream_timeout' },
    ]);
  });

  it('drops a cached token Vertex refuses (401, revoked long before it expires): the next request fetches a new one and is served', async () => {
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    await openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'one' }] });
    const cached = String(upstream.last.headers.authorization).replace('Bearer ', '');
    revoked.add(cached);
    const err = await rejection(openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'two' }] }));
    expect({ status: err.status, code: err.error.code }).to.deep.equal({ status: 502, code: 'upstream_auth_failed' });
    const issuedBefore = tokens.issued.length;
    const data = await openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'three' }] });
    expect(data.choices[0].message.content).to.equal('The sky is blue.');
    expect(tokens.issued.length - issuedBefore, 'one new token').to.equal(1);
    expect(upstream.last.headers.authorization).to.equal(`Bearer ${tokens.issued.at(-1)}`);
  });

  it('a token Vertex refuses is the gateway\u2019s 502; the private key and token appear nowhere', async () => {
    upstream.reply(() => json({}));
    for (const token of tokens.issued) revoked.add(token);
    const err = await rejection(openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'hi' }] }));
    expect({ status: err.status, code: err.error.code }).to.deep.equal({ status: 502, code: 'upstream_auth_failed' });
    const everything = JSON.stringify(err.error) + gw.logLines.join('\n');
    for (const token of tokens.issued) expect(everything).to.not.include(token);
    expect(everything).to.not.include('PRIVATE KEY');
  });
});
