import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { fakeGeminiApi, googleError } from '../providers/gemini/fake-google-upstream';
import { json, sse, type CloudUpstream } from '../providers/cloud-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { eventually } from '../support/eventually';
import { rejection, streamTrailers } from './cloud-support';

const GEMINI_KEY = 'AIzaSyD-gemini-provider-CANARY-0123456789';
const CLIENT_KEY = 'sk-client-gemini-CANARY-77';
const NOW_MS = 1700000000_000;
// $ per million tokens; cached prompt tokens at a quarter of the input price
const PRICE = { inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.075 };

describe('gemini provider end to end (openai and anthropic SDKs, fake Gemini API)', () => {
  let upstream: CloudUpstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    upstream = await fakeGeminiApi(GEMINI_KEY).start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'app' })
      .withProvider({ id: 'google', type: 'gemini', baseUrl: `${upstream.url}/v1beta`, apiKey: GEMINI_KEY })
      .withModel('gemini-flash', { model: 'gemini-2.5-flash', price: PRICE })
      .withModel('gemini-embed', { model: 'gemini-embedding-001', kind: 'embedding' })
      .withModel('gemini-3-pro', { model: 'gemini-3-pro-preview' })
      .withModel('gemini-3.1-pro', { model: 'gemini-3.1-pro-preview' })
      .withModel('gemini-2.5-pro', { model: 'gemini-2.5-pro', price: PRICE })
      // priced from the bundled table
      .withModel('gemini-pro-listed', { model: 'gemini-2.5-pro' })
      .withProvider({ id: 'google-wrong-key', type: 'gemini', baseUrl: `${upstream.url}/v1beta`, apiKey: 'AIzaSy-revoked-key-000000000000' })
      .withModel('gemini-misconfigured', { model: 'gemini-2.5-flash' })
      .with({ routing: { retries: 0 } })
      .start({ clock: { now: () => NOW_MS } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('sends generateContent with the key in x-goog-api-key only, and answers with the translated completion and its cost', async () => {
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    const request = readFixture('gemini', 'system-images-schema.chat-request.json');
    const { data, response } = await openai.chat.completions.create({ ...request, model: 'gemini-flash' }).withResponse();
    expect(upstream.last.path).to.equal('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(upstream.last.headers['x-goog-api-key']).to.equal(GEMINI_KEY);
    expect(upstream.last.headers.authorization).to.equal(undefined);
    expect(JSON.stringify(upstream.last.headers)).to.not.include(CLIENT_KEY);
    expect(upstream.last.body).to.deep.equal(readFixture('gemini', 'system-images-schema.upstream-request.json'));
    expect(data).to.deep.equal(readFixture('gemini', 'text-usage.chat-response.json'));
    // 200 uncached x $0.30 + 1000 cached x $0.075 + 45 output (5 answer + 40 thinking) x $2.50, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.0002475');
  });

  it('streams with alt=sse, the openai SDK assembling parallel tool calls; the stream is priced in its trailer', async () => {
    upstream.reply(() => sse(readFixture('gemini', 'tool-calls.upstream-stream.json')));
    const runner = openai.chat.completions.stream({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }] });
    const completion = await runner.finalChatCompletion();
    expect(upstream.last.path).to.equal('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const message = completion.choices[0].message;
    expect(message.content).to.equal('Checking both.');
    expect(message.tool_calls?.map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) } : c))).to.deep.equal([
      { id: 'call_s2_0__thought__c2ln', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_s2_1', name: 'get_weather', args: { city: 'Tokyo' } },
    ]);
    expect(completion.choices[0].finish_reason).to.equal('tool_calls');

    const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'gemini-flash', stream: true, messages: [{ role: 'user', content: 'Weather?' }] }, CLIENT_KEY);
    expect(raw.status).to.equal(200);
    // 30 input x $0.30 + 10 output x $2.50, per million
    expect(raw.trailers['x-gateway-response-cost']).to.equal('0.000034');
  });

  it('sends the tool answers of a parallel call back as function responses, with the thought signature', async () => {
    upstream.reply(() => json(readFixture('gemini', 'max-tokens.upstream-response.json')));
    const request = readFixture('gemini', 'parallel-tool-round-trip.chat-request.json');
    const data = await openai.chat.completions.create({ ...request, model: 'gemini-flash' });
    expect(upstream.last.body).to.deep.equal(readFixture('gemini', 'parallel-tool-round-trip.upstream-request.json'));
    expect(data.choices[0].finish_reason).to.equal('length');
  });

  it('continues on Gemini 3 a conversation whose tool calls another model made: Gemini 3 refuses a call without a thought signature', async () => {
    // Gemini 3 checks the first function call of each model turn after the last user text for its signature
    upstream.reply((request) => {
      const contents = request.body.contents as { role: string; parts: Record<string, any>[] }[];
      const lastText = contents.map((c, i) => (c.role === 'user' && c.parts.some((p) => typeof p.text === 'string') ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
      const unsigned = contents.slice(lastText + 1).some((c) => c.role === 'model' && c.parts.some((p) => p.functionCall) && !c.parts.find((p) => p.functionCall)?.thoughtSignature);
      if (unsigned) return json(googleError(400, 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.', 'INVALID_ARGUMENT'), 400);
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Paris and Tokyo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_gpt_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_gpt_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_gpt_1', content: '{"temp":18}' },
      { role: 'tool', tool_call_id: 'call_gpt_2', content: '{"temp":22}' },
    ];
    const data = await openai.chat.completions.create({ model: 'gemini-3-pro', messages });
    expect(data.choices[0].finish_reason).to.equal('stop');
    const calls = (upstream.last.body.contents[1].parts as Record<string, any>[]).map((p) => ({ name: p.functionCall.name, signed: p.thoughtSignature !== undefined }));
    // only the first call of a parallel set carries one, as Gemini 3 sends them
    expect(calls).to.deep.equal([
      { name: 'get_weather', signed: true },
      { name: 'get_weather', signed: false },
    ]);

    // Gemini 2.5 takes the same history as it is
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    await openai.chat.completions.create({ model: 'gemini-flash', messages });
    expect((upstream.last.body.contents[1].parts as Record<string, any>[]).some((p) => p.thoughtSignature !== undefined)).to.equal(false);
  });

  it('sends Gemini 3\u2019s call ids back on its calls and on the answers to them, which it pairs parallel calls by', async () => {
    // Gemini 3 gives each call an id and pairs the answers to parallel calls by it: the fake refuses an
    // answer whose id names none of the calls
    const calls = [
      { functionCall: { id: 'g3call01', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
      { functionCall: { id: 'g3call02', name: 'get_weather', args: { city: 'Tokyo' } } },
    ];
    upstream.reply((request) => {
      const parts = (request.body.contents as { parts: Record<string, any>[] }[]).flatMap((c) => c.parts);
      const ids = parts.filter((p) => p.functionCall?.id !== undefined).map((p) => p.functionCall.id);
      const unpaired = parts.filter((p) => p.functionResponse).some((p) => !ids.includes(p.functionResponse.id));
      if (unpaired) return json(googleError(400, 'A function response does not name a function call of the turn before it.', 'INVALID_ARGUMENT'), 400);
      return json(parts.some((p) => p.functionResponse) ? readFixture('gemini', 'text-usage.upstream-response.json') : { candidates: [{ content: { role: 'model', parts: calls }, finishReason: 'STOP', index: 0 }], responseId: 'g3r', modelVersion: 'gemini-3-pro-preview' });
    });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and Tokyo?' }];
    const first = await openai.chat.completions.create({ model: 'gemini-3-pro', tools, messages });
    const toolCalls = first.choices[0].message.tool_calls ?? [];
    expect(toolCalls.map((c) => c.id)).to.deep.equal(['g3call01__thought__c2ln', 'g3call02']);
    messages.push(first.choices[0].message, ...toolCalls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c.id, content: `{"temp":${18 + i}}` })));

    const second = await openai.chat.completions.create({ model: 'gemini-3-pro', tools, messages });
    expect(second.choices[0].finish_reason).to.equal('stop');
    const [, model, answers] = upstream.last.body.contents as { parts: Record<string, any>[] }[];
    expect(model.parts.map((p) => [p.functionCall.id, p.thoughtSignature])).to.deep.equal([
      ['g3call01', 'c2ln'],
      ['g3call02', undefined],
    ]);
    expect(answers.parts.map((p) => [p.functionResponse.id, p.functionResponse.response])).to.deep.equal([
      ['g3call01', { temp: 18 }],
      ['g3call02', { temp: 19 }],
    ]);
  });

  it('sends an inline image as a MIME type Gemini takes: image/jpg (a file extension) and a type its bytes belie as what the bytes are', async () => {
    const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJCAsIyccHCg3KSwwMTQ0NB8nOT04MjwuMzQy';
    const TAKEN = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'];
    // what the Gemini API answers to any other image type
    upstream.reply((request) => {
      const parts = (request.body.contents as { parts: Record<string, any>[] }[]).flatMap((c) => c.parts);
      const odd = parts.find((p) => p.inlineData && !TAKEN.includes(p.inlineData.mimeType));
      if (odd) return json(googleError(400, `Unsupported MIME type: ${odd.inlineData.mimeType}`, 'INVALID_ARGUMENT'), 400);
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const data = await openai.chat.completions.create({
      model: 'gemini-flash',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Same picture twice?' },
            { type: 'image_url', image_url: { url: `data:image/jpg;base64,${JPEG}` } },
            { type: 'image_url', image_url: { url: `data:application/octet-stream;base64,${JPEG}` } },
          ],
        },
      ],
    });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    const parts = upstream.last.body.contents[0].parts as Record<string, any>[];
    expect(parts.slice(1)).to.deep.equal([{ inlineData: { mimeType: 'image/jpeg', data: JPEG } }, { inlineData: { mimeType: 'image/jpeg', data: JPEG } }]);
  });

  it('sends a PDF as inline data, from a chat file part and from a Messages document block; a file by id is a 400 naming the part', async () => {
    const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n').toString('base64');
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    const data = await openai.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise the report.' }, { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } }] }],
    });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(upstream.last.body.contents[0].parts).to.deep.equal([{ text: 'Summarise the report.' }, { inlineData: { mimeType: 'application/pdf', data: PDF } }]);

    const message = await anthropic.messages.create({
      model: 'gemini-flash',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report' }, { type: 'text', text: 'Summarise it.' }] }],
    });
    expect(message.content[0]).to.include({ type: 'text' });
    expect(upstream.last.body.contents[0].parts).to.deep.equal([{ inlineData: { mimeType: 'application/pdf', data: PDF } }, { text: 'Summarise it.' }]);

    const sent = upstream.requests.length;
    const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc123' } }] }] }));
    expect(err.status).to.equal(400);
    expect(err.error).to.include({ code: 'unsupported_content', param: 'messages[0].content[0].file' });
    expect(upstream.requests.length).to.equal(sent);
  });

  it('asks Gemini 2.5 Pro, which cannot stop thinking, for its least thinking when a client asks for minimal or none; others think not at all', async () => {
    // what the Gemini API answers Gemini 2.5 Pro for a budget under its least, 128
    upstream.reply((request) => {
      const budget = request.body.generationConfig?.thinkingConfig?.thinkingBudget;
      if (request.path.includes('gemini-2.5-pro') && typeof budget === 'number' && budget < 128) {
        return json(googleError(400, budget === 0 ? 'Budget 0 is invalid. This model only works in thinking mode.' : `The thinking budget (${budget}) is invalid.`, 'INVALID_ARGUMENT'), 400);
      }
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const budgets: [string, string, unknown][] = [];
    for (const model of ['gemini-2.5-pro', 'gemini-flash']) {
      for (const effort of ['minimal', 'none'] as const) {
        const data = await openai.chat.completions.create({ model, reasoning_effort: effort, messages: [{ role: 'user', content: 'Quick: 2+2?' }] });
        expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
        budgets.push([model, effort, upstream.last.body.generationConfig.thinkingConfig.thinkingBudget]);
      }
    }
    expect(budgets).to.deep.equal([
      ['gemini-2.5-pro', 'minimal', 128],
      ['gemini-2.5-pro', 'none', 128],
      ['gemini-flash', 'minimal', 0],
      ['gemini-flash', 'none', 0],
    ]);
  });

  it('asks the Gemini 3 Pro models, which cannot stop thinking either, for their least thinking when a client asks for minimal or none', async () => {
    // what the Gemini API answers a Gemini 3 Pro model for a budget of 0
    upstream.reply((request) => {
      const budget = request.body.generationConfig?.thinkingConfig?.thinkingBudget;
      if (/gemini-3(\.\d+)?-pro/.test(request.path) && budget === 0) return json(googleError(400, 'Budget 0 is invalid. This model only works in thinking mode.', 'INVALID_ARGUMENT'), 400);
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const budgets: [string, string, unknown][] = [];
    for (const model of ['gemini-3-pro', 'gemini-3.1-pro']) {
      for (const effort of ['minimal', 'none'] as const) {
        const data = await openai.chat.completions.create({ model, reasoning_effort: effort, messages: [{ role: 'user', content: 'Quick: 2+2?' }] });
        expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
        budgets.push([model, effort, upstream.last.body.generationConfig.thinkingConfig.thinkingBudget]);
      }
    }
    expect(budgets).to.deep.equal([
      ['gemini-3-pro', 'minimal', 128],
      ['gemini-3-pro', 'none', 128],
      ['gemini-3.1-pro', 'minimal', 128],
      ['gemini-3.1-pro', 'none', 128],
    ]);
  });

  it('prices a Gemini 2.5 Pro prompt over 200K tokens at the long-context rates, input and output alike, JSON and streamed', async () => {
    const answer = (promptTokenCount: number) => ({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Read it all.' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount, cachedContentTokenCount: 100000, candidatesTokenCount: 1000, thoughtsTokenCount: 1000, totalTokenCount: promptTokenCount + 2000 },
      modelVersion: 'gemini-2.5-pro',
    });
    const request = { model: 'gemini-pro-listed', messages: [{ role: 'user' as const, content: 'Summarise the codebase.' }] };
    upstream.reply(() => json(answer(250000)));
    const over = await openai.chat.completions.create(request).withResponse();
    // 150K uncached x $2.50 + 100K cached x $0.25 + 2K output (answer and thinking) x $15, per million
    expect(over.response.headers.get('x-gateway-response-cost')).to.equal('0.43');

    upstream.reply(() => sse([{ data: answer(250000) }]));
    const streamed = await streamTrailers(gw.url, '/v1/chat/completions', { ...request, stream: true }, CLIENT_KEY);
    expect(streamed.trailers['x-gateway-response-cost']).to.equal('0.43');

    upstream.reply(() => json(answer(200000)));
    const at = await openai.chat.completions.create(request).withResponse();
    // 100K uncached x $1.25 + 100K cached x $0.125 + 2K output x $10, per million
    expect(at.response.headers.get('x-gateway-response-cost')).to.equal('0.1575');
  });

  it('thinks its most for the efforts above high (xhigh, max) that OpenAI and Anthropic clients send, rather than refusing them', async () => {
    upstream.reply(() => json(readFixture('gemini', 'text-usage.upstream-response.json')));
    // a Messages client's effort reaches the provider as the chat reasoning_effort of that name
    const message = await anthropic.messages.create({ model: 'gemini-flash', max_tokens: 4096, output_config: { effort: 'xhigh' }, messages: [{ role: 'user', content: 'Prove it.' }] });
    expect(message.content.map((b) => b.type)).to.deep.equal(['text']);
    expect(upstream.last.body.generationConfig.thinkingConfig).to.deep.equal({ thinkingBudget: 24576 });
    const data = await openai.chat.completions.create({ model: 'gemini-flash', reasoning_effort: 'max', messages: [{ role: 'user', content: 'Prove it.' }] });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(upstream.last.body.generationConfig.thinkingConfig).to.deep.equal({ thinkingBudget: 24576 });
  });

  it('answers a request that is only a system message (OpenAI takes one; Gemini refuses a request without contents) with the message as the prompt', async () => {
    upstream.reply((request) => {
      if (!Array.isArray(request.body.contents) || request.body.contents.length === 0) return json(googleError(400, '* GenerateContentRequest.contents: contents is not specified\n', 'INVALID_ARGUMENT'), 400);
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const data = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'system', content: 'Write a haiku about the sea.' }] });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    expect(upstream.last.body.contents).to.deep.equal([{ role: 'user', parts: [{ text: 'Write a haiku about the sea.' }] }]);
    expect(upstream.last.body.systemInstruction).to.equal(undefined);
  });

  it('answers a conversation that starts with the assistant\u2019s greeting, which Gemini refuses as sent, with the greeting kept', async () => {
    upstream.reply((request) => {
      if (request.body.contents[0]?.role !== 'user') return json(googleError(400, 'Please ensure that multiturn requests alternate between user and model.', 'INVALID_ARGUMENT'), 400);
      return json(readFixture('gemini', 'text-usage.upstream-response.json'));
    });
    const history = [
      { role: 'assistant' as const, content: 'Hello! How can I help you today?' },
      { role: 'user' as const, content: 'What colour is the sky?' },
    ];
    const data = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'system', content: 'Be brief.' }, ...history] });
    expect(data.choices[0].message.content).to.be.a('string').and.not.equal('');
    const sent = upstream.last.body.contents as { role: string; parts: { text: string }[] }[];
    // the greeting reaches the model as its own earlier turn, after a user turn that says nothing more
    expect(sent.map((c) => c.role)).to.deep.equal(['user', 'model', 'user']);
    expect(sent.slice(1)).to.deep.equal([{ role: 'model', parts: [{ text: 'Hello! How can I help you today?' }] }, { role: 'user', parts: [{ text: 'What colour is the sky?' }] }]);
    expect(sent[0].parts).to.have.length(1);
    expect(sent[0].parts[0].text).to.be.a('string').and.match(/\S/);
    // the same history from an Anthropic client, which Claude's own API takes as it is
    const message = await anthropic.messages.create({ model: 'gemini-flash', max_tokens: 100, messages: history });
    expect(message.content.map((b) => b.type)).to.deep.equal(['text']);
  });

  it('serves an anthropic SDK client: a streamed tool call assembled by the SDK, usage in Messages terms', async () => {
    upstream.reply(() => sse(readFixture('gemini', 'tool-calls.upstream-stream.json')));
    const message = await anthropic.messages
      .stream({ model: 'gemini-flash', max_tokens: 200, messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] })
      .finalMessage();
    expect(upstream.last.body.tools).to.deep.equal([{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }]);
    expect(upstream.last.body.generationConfig).to.deep.equal({ maxOutputTokens: 200 });
    expect(message.stop_reason).to.equal('tool_use');
    expect(message.content.map((b) => (b.type === 'tool_use' ? { name: b.name, input: b.input } : b.type === 'text' ? b.text : b.type))).to.deep.equal([
      'Checking both.',
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_weather', input: { city: 'Tokyo' } },
    ]);
    expect(message.usage.input_tokens).to.equal(30);
    expect(message.usage.output_tokens).to.equal(10);
  });

  it('embeds with embedContent and batchEmbedContents, the openai SDK decoding its default base64', async () => {
    upstream.reply((req) => (req.path.endsWith(':batchEmbedContents') ? json({ embeddings: [{ values: [0.5, -1] }, { values: [0.25, 2] }] }) : json({ embedding: { values: [0.125, 3] } })));
    const one = await openai.embeddings.create({ model: 'gemini-embed', input: 'hello', dimensions: 2 });
    expect(upstream.last.path).to.equal('/v1beta/models/gemini-embedding-001:embedContent');
    expect(upstream.last.body).to.deep.equal({ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello' }] }, outputDimensionality: 2 });
    expect(one.data.map((d) => d.embedding)).to.deep.equal([[0.125, 3]]);
    const two = await openai.embeddings.create({ model: 'gemini-embed', input: ['a', 'b'] });
    expect(upstream.last.path).to.equal('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(two.data.map((d) => d.embedding)).to.deep.equal([
      [0.5, -1],
      [0.25, 2],
    ]);
  });

  it('embeds 250 inputs in batches of 100, the most batchEmbedContents takes, the vectors in input order', async () => {
    upstream.reply((req) => {
      const requests = req.body.requests as { content: { parts: { text: string }[] } }[];
      if (requests.length > 100) return json(googleError(400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n', 'INVALID_ARGUMENT'), 400);
      return json({ embeddings: requests.map((r) => ({ values: [r.content.parts[0].text.length, 1] })) });
    });
    const input = Array.from({ length: 250 }, (_, i) => 'x'.repeat(i + 1));
    const { data, response } = await openai.embeddings.create({ model: 'gemini-embed', input }).withResponse();
    expect(upstream.requests.map((r) => [r.path, r.body.requests.length]).sort()).to.deep.equal([
      ['/v1beta/models/gemini-embedding-001:batchEmbedContents', 100],
      ['/v1beta/models/gemini-embedding-001:batchEmbedContents', 100],
      ['/v1beta/models/gemini-embedding-001:batchEmbedContents', 50],
    ]);
    expect(data.data.map((d) => [d.index, d.embedding[0]])).to.deep.equal(input.map((text, i) => [i, text.length]));
    // no token count from Google: charged from the whole input, about four characters a token
    expect(Number(response.headers.get('x-gateway-response-cost'))).to.be.greaterThan(0);
  });

  it('charges an embedding from its input, flagged as estimated, as Google reports no token count for one', async () => {
    upstream.reply(() => json({ embeddings: [{ values: [0.5, -1] }, { values: [0.25, 2] }] }));
    const { data, response } = await openai.embeddings.create({ model: 'gemini-embed', input: ['a'.repeat(400), 'b'.repeat(200)] }).withResponse();
    expect(data.data).to.have.length(2);
    // the answer is the gateway's own translation: it tells the client the tokens it is charged for, not 0
    expect(data.usage).to.deep.equal({ prompt_tokens: 150, total_tokens: 150 });
    // 100 + 50 tokens (about four characters each) at the bundled $0.15 per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.0000225');
    const requestId = response.headers.get('x-gateway-request-id');
    const entry = await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 10 })).data.find((e) => e.requestId === requestId));
    expect(entry).to.include({ endpoint: 'embeddings', promptTokens: 150, cost: 0.0000225 });
    expect(entry.details).to.deep.include({ usageEstimated: true });
  });

  describe('errors, in each API\u2019s own shape', () => {
    it('a rate limit is a 429 with Retry-After from Google\u2019s RetryInfo', async () => {
      upstream.reply(() => json(googleError(429, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }]), 429));
      const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(429);
      expect(err.headers.get('retry-after')).to.equal('7');
      expect(err.error.code).to.equal('upstream_rate_limited');
    });

    it('a rate limit whose RetryInfo asks for a longer pause than the router waits is not sent again at once', async () => {
      // Google gives the pause only in the RetryInfo detail, never as a Retry-After header
      const retrying = await testConfig()
        .withKey(CLIENT_KEY)
        .withProvider({ id: 'google', type: 'gemini', baseUrl: `${upstream.url}/v1beta`, apiKey: GEMINI_KEY })
        .withModel('gemini-flash', { model: 'gemini-2.5-flash' })
        .with({ routing: { retries: 2 } })
        .start();
      try {
        upstream.reply(() => json(googleError(429, 'Quota exceeded for metric: generate_content_free_tier_requests.', 'RESOURCE_EXHAUSTED', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '120s' }]), 429));
        const client = new OpenAI({ baseURL: `${retrying.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
        const err = await rejection(client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }));
        expect({ status: err.status, retryAfter: err.headers.get('retry-after') }).to.deep.equal({ status: 429, retryAfter: '120' });
        expect(upstream.requests.length).to.equal(1);
      } finally {
        await retrying.close();
      }
    });

    it('a deadline Google gives up on (504 DEADLINE_EXCEEDED) is the gateway\u2019s 504 upstream_timeout, retried as a timeout', async () => {
      const deadline = googleError(504, 'Deadline expired before operation could complete.', 'DEADLINE_EXCEEDED');
      upstream.reply(() => json(deadline, 504));
      const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }));
      expect({ status: err.status, code: err.error.code, type: err.error.type }).to.deep.equal({ status: 504, code: 'upstream_timeout', type: 'timeout_error' });

      const retrying = await testConfig()
        .withKey(CLIENT_KEY)
        .withProvider({ id: 'google', type: 'gemini', baseUrl: `${upstream.url}/v1beta`, apiKey: GEMINI_KEY })
        .withModel('gemini-flash', { model: 'gemini-2.5-flash' })
        .with({ routing: { retries: 1 } })
        .start();
      try {
        let calls = 0;
        upstream.reply(() => (++calls === 1 ? json(deadline, 504) : json(readFixture('gemini', 'text-usage.upstream-response.json'))));
        const client = new OpenAI({ baseURL: `${retrying.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
        const { response } = await client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
        const requestId = response.headers.get('x-gateway-request-id');
        const entry: any = await eventually(async () => (await retrying.gateway.services.requestLog.query({ limit: 10 })).data.find((e) => e.requestId === requestId));
        expect(entry.details.attempts[0]).to.deep.equal({ deploymentId: 'google/gemini-2.5-flash', status: 504, error: 'upstream_timeout' });
      } finally {
        await retrying.close();
      }
    });

    it('a key Google refuses is the gateway\u2019s 502, and the key appears nowhere', async () => {
      const err = await rejection(openai.chat.completions.create({ model: 'gemini-misconfigured', messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(502);
      expect(err.error.code).to.equal('upstream_auth_failed');
      expect(JSON.stringify(err.error) + gw.logLines.join('\n')).to.not.include('AIzaSy-revoked');
      expect(gw.logLines.join('\n')).to.not.include(GEMINI_KEY);
    });

    it('a blocked prompt is a 400 content_filter error for chat and for Messages, streamed or not', async () => {
      upstream.reply(() => json({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }));
      const chat = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'something unsafe' }] }));
      expect({ status: chat.status, code: chat.error.code, message: chat.error.message }).to.deep.equal({ status: 400, code: 'content_filter', message: 'The Gemini upstream blocked the prompt (SAFETY).' });
      const messages = await rejection(anthropic.messages.create({ model: 'gemini-flash', max_tokens: 10, messages: [{ role: 'user', content: 'something unsafe' }] }));
      expect(messages.status).to.equal(400);
      expect(messages.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'The Gemini upstream blocked the prompt (SAFETY).' } });
      upstream.reply(() => sse([{ data: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } } }]));
      const streamed = await rejection(openai.chat.completions.create({ model: 'gemini-flash', stream: true, messages: [{ role: 'user', content: 'something unsafe' }] }));
      expect({ status: streamed.status, code: streamed.error.code }).to.deep.equal({ status: 400, code: 'content_filter' });
    });

    it('an error Google sends after the stream started ends it with an error event carrying its words', async () => {
      upstream.reply(() => sse([{ data: { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }], responseId: 'e1' } }, { data: googleError(500, 'An internal error has occurred.', 'INTERNAL') }]));
      const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'gemini-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] }, CLIENT_KEY);
      expect(raw.status).to.equal(200);
      expect(raw.text).to.include('"Hel"');
      expect(raw.text).to.include('"code":"upstream_stream_error"');
      expect(raw.text).to.include('The Gemini upstream failed (HTTP 500): An internal error has occurred.');
      expect(raw.text).to.not.include('[DONE]');
    });

    it('a malformed function call with nothing said is a 502 the openai SDK can retry, JSON and streamed, not an empty stop', async () => {
      const failed = { candidates: [{ index: 0, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: get_weather(city=Paris' }], usageMetadata: { promptTokenCount: 40, totalTokenCount: 40 }, responseId: 'm1' };
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      upstream.reply(() => json(failed));
      const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }));
      expect({ status: err.status, code: err.error.code, message: err.error.message }).to.deep.equal({ status: 502, code: 'upstream_error', message: 'The Gemini model stopped without an answer (MALFORMED_FUNCTION_CALL): Malformed function call: get_weather(city=Paris' });
      upstream.reply(() => sse([{ data: failed }]));
      const streamed = await rejection(openai.chat.completions.create({ model: 'gemini-flash', stream: true, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }));
      expect({ status: streamed.status, code: streamed.error.code }).to.deep.equal({ status: 502, code: 'upstream_error' });
    });

    it('newer finish reasons with nothing said are errors, not an empty stop: image filters a 400 content_filter, failures and unknown ones a 502', async () => {
      const expected: [string, number, string][] = [
        ['IMAGE_PROHIBITED_CONTENT', 400, 'content_filter'],
        ['IMAGE_RECITATION', 400, 'content_filter'],
        ['MISSING_THOUGHT_SIGNATURE', 502, 'upstream_error'],
        ['NO_IMAGE', 502, 'upstream_error'],
        ['SOME_REASON_GOOGLE_ADDS_LATER', 502, 'upstream_error'],
      ];
      const seen: [string, number, string][] = [];
      for (const [reason] of expected) {
        const silent = { candidates: [{ index: 0, finishReason: reason }], usageMetadata: { promptTokenCount: 40, totalTokenCount: 40 }, responseId: 'f1' };
        upstream.reply(() => json(silent));
        const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Draw a cat.' }] }));
        seen.push([reason, err.status, err.error.code]);
        upstream.reply(() => sse([{ data: silent }]));
        const streamed = await rejection(anthropic.messages.create({ model: 'gemini-flash', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Draw a cat.' }] }));
        expect(streamed.status, reason).to.equal(err.status);
      }
      expect(seen).to.deep.equal(expected);
    });

    it('an image filter that stops an answer part way is finish_reason content_filter, not stop', async () => {
      upstream.reply(() => json({ candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Here is' }] }, finishReason: 'IMAGE_RECITATION' }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 }, responseId: 'f2' }));
      const answer = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Draw a cat.' }] });
      expect({ content: answer.choices[0].message.content, finish: answer.choices[0].finish_reason }).to.deep.equal({ content: 'Here is', finish: 'content_filter' });
    });

    it('a prompt over the context window is 400 context_length_exceeded', async () => {
      upstream.reply(() => json(googleError(400, 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', 'INVALID_ARGUMENT'), 400));
      const err = await rejection(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'long' }] }));
      expect({ status: err.status, code: err.error.code }).to.deep.equal({ status: 400, code: 'context_length_exceeded' });
    });

    it('a prompt over the context window reaches a Messages client (Claude Code) in Anthropic\u2019s words, with Google\u2019s numbers', async () => {
      upstream.reply(() => json(googleError(400, 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', 'INVALID_ARGUMENT'), 400));
      const err = await rejection(anthropic.messages.create({ model: 'gemini-flash', max_tokens: 100, messages: [{ role: 'user', content: 'long' }] }));
      expect({ status: err.status, error: err.error }).to.deep.equal({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 1200000 tokens > 1048576 maximum' } } });
    });
  });
});
