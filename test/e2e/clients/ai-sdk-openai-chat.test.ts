/**
 * The Vercel AI SDK 7's OpenAI chat model (`openai.chat(...)`) against the gateway, as its users write it:
 * plain text and streaming with usage read back, a tool loop (the follow-up turn carries the tool result),
 * generateObject on an OpenAI model and on a Claude model (through chat, translated to Messages), an
 * image in, and a multi-turn conversation.
 */
import { expect } from 'chai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { FakeOpenAI, chatChunks, chatCompletion, type RecordedRequest, type Script } from '../../support/fake-openai';
import { FakeAnthropicUpstream } from '../../providers/anthropic/fake-anthropic-upstream';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-ai-sdk-chat-CANARY-3f7';
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const person = jsonSchema<{ name: string; born: number }>({
  type: 'object',
  properties: { name: { type: 'string' }, born: { type: 'integer' } },
  required: ['name', 'born'],
  additionalProperties: false,
});

describe('AI SDK 7 (@ai-sdk/openai chat model) against the gateway', () => {
  let upstream: FakeOpenAI;
  let claude: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    claude = new FakeAnthropicUpstream('sk-ant-provider');
    await claude.start();
    gw = await testConfig()
      .withKey(KEY, { id: 'ai-sdk-chat' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: claude.url, apiKey: 'sk-ant-provider' })
      .withModel('claude-test', { model: 'claude-upstream' })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await claude.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    claude.requests.length = 0;
  });

  const model = (name = 'gpt-test') => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY }).chat(name);

  it('plain text: reads the answer and the upstream\u2019s token usage', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Paris.', { prompt_tokens: 21, completion_tokens: 2, total_tokens: 23 }) };
    const result = await generateText({ model: model(), prompt: 'Capital of France?' });
    expect(result.text).to.equal('Paris.');
    expect(result.usage).to.deep.include({ inputTokens: 21, outputTokens: 2, totalTokens: 23 });
    expect(upstream.last.body.messages).to.deep.equal([{ role: 'user', content: 'Capital of France?' }]);
  });

  it('streaming: reads the text and the usage from the final chunk, and the log charges it', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['Bon', 'jour'], { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 }) };
    const result = streamText({ model: model(), prompt: 'Hello in French' });
    expect(await result.text).to.equal('Bonjour');
    expect(await result.usage).to.deep.include({ inputTokens: 30, outputTokens: 3 });
    expect(upstream.last.body.stream_options).to.deep.equal({ include_usage: true });
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ promptTokens: 30, completionTokens: 3 });
  });

  for (const streamed of [false, true]) {
    it(`tool loop: the SDK runs the tool and sends its result on the follow-up turn (${streamed ? 'streamed' : 'JSON'})`, async () => {
      upstream.script = (req: RecordedRequest): Script => {
        const toolMessage = (req.body.messages as any[]).find((m) => m.role === 'tool');
        if (toolMessage) {
          const text = `It is ${JSON.parse(toolMessage.content).celsius} degrees in Oslo.`;
          return streamed ? { kind: 'sse', events: chatChunks([text], { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 }) } : { kind: 'json', body: chatCompletion(text) };
        }
        const call = { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };
        if (!streamed) return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
        const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
        return {
          kind: 'sse',
          events: [
            { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '' } }] }, finish_reason: null }] },
            { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null }] },
            { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, finish_reason: null }] },
            { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
            { ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26 } },
          ],
        };
      };
      const seen: unknown[] = [];
      const args = {
        model: model(),
        prompt: 'Weather in Oslo?',
        stopWhen: stepCountIs(3),
        tools: {
          weather: tool({
            description: 'Current temperature',
            inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
            execute: async (input: { city: string }) => (seen.push(input), { celsius: 4 }),
          }),
        },
      };
      const text = streamed ? await streamText(args).text : (await generateText(args)).text;
      expect(seen).to.deep.equal([{ city: 'Oslo' }]);
      expect(text).to.equal('It is 4 degrees in Oslo.');
      expect(upstream.requests).to.have.length(2);
      expect(upstream.requests[0].body.tools[0]).to.deep.include({ type: 'function' });
      expect(upstream.requests[0].body.tools[0].function.name).to.equal('weather');
      const followUp = upstream.last.body.messages as any[];
      expect(followUp[1].tool_calls[0]).to.deep.include({ id: 'call_w1' });
      expect(followUp[2]).to.deep.include({ role: 'tool', tool_call_id: 'call_w1' });
    });
  }

  it('generateObject on an OpenAI model: the schema goes upstream as response_format json_schema', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('{"name":"Ada Lovelace","born":1815}') };
    const { object, usage } = await generateObject({ model: model(), schema: person, prompt: 'Ada Lovelace, born 1815.' });
    expect(object).to.deep.equal({ name: 'Ada Lovelace', born: 1815 });
    expect(usage.inputTokens).to.equal(10);
    expect(upstream.last.body.response_format.type).to.equal('json_schema');
    expect(upstream.last.body.response_format.json_schema.schema).to.deep.include({ required: ['name', 'born'] });
  });

  it('generateObject on a Claude model through chat: Claude is asked for the schema and its JSON comes back', async () => {
    claude.reply({
      json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text: '{"name":"Grace Hopper","born":1906}' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 44, output_tokens: 12 } },
    });
    const { object, usage } = await generateObject({ model: model('claude-test'), schema: person, prompt: 'Grace Hopper, born 1906.' });
    expect(object).to.deep.equal({ name: 'Grace Hopper', born: 1906 });
    expect(usage).to.deep.include({ inputTokens: 44, outputTokens: 12 });
    // the schema reached Claude in some form it acts on, not dropped on the way
    expect(JSON.stringify(claude.requests[0].body)).to.include('"born"');
  });

  it('image in: the image part reaches the upstream as an image_url data URL', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('A single pixel.') };
    const result = await generateText({
      model: model(),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: Buffer.from(PNG_1PX, 'base64'), mediaType: 'image/png' }] }],
    });
    expect(result.text).to.equal('A single pixel.');
    const parts = upstream.last.body.messages[0].content as any[];
    expect(parts[1]).to.deep.equal({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1PX}` } });
  });

  it('PDF in, on a Claude model through chat: the file part reaches Claude as a document block', async () => {
    claude.reply({
      json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text: 'A one-page invoice.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1500, output_tokens: 6 } },
    });
    const pdf = Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
    const result = await generateText({
      model: model('claude-test'),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'invoice.pdf' }] }],
    });
    expect(result.text).to.equal('A one-page invoice.');
    expect(claude.requests[0].body.messages[0].content).to.deep.equal([
      { type: 'text', text: 'What is this?' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') }, title: 'invoice.pdf' },
    ]);
  });

  it('multi-turn: the earlier turns reach the upstream in order', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('Yes, they purr.') };
    const result = await generateText({
      model: model(),
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'What is a cat?' },
        { role: 'assistant', content: 'A small feline.' },
        { role: 'user', content: 'Do they purr?' },
      ],
    });
    expect(result.text).to.equal('Yes, they purr.');
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is a cat?' },
      { role: 'assistant', content: 'A small feline.' },
      { role: 'user', content: 'Do they purr?' },
    ]);
  });
});
