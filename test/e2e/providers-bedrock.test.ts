import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeBedrock, eventMessage, eventStream, exceptionMessage, json } from '../providers/bedrock/fake-bedrock-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rejection, streamTrailers } from './cloud-support';

const KEYS = { accessKeyId: 'AKIAFAKEGATEWAY00001', secretAccessKey: 'fake/secret+Key/CANARY/0123456789abcdefghij' };
const CLIENT_KEY = 'sk-client-bedrock-CANARY-9';
const MODEL = 'anthropic.claude-sonnet-4-5-v1:0';
const MODEL_PATH = `/model/${encodeURIComponent(MODEL)}`;
const NOW_MS = 1700000000_000;
const PRICE = { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 };

function converseStream(fixture: string, extra: Uint8Array[] = []) {
  const events = readFixture<{ event: string; data: unknown }[]>('bedrock', `${fixture}.upstream-stream.json`);
  return eventStream([...events.map((e) => eventMessage(e.event, e.data)), ...extra]);
}

describe('bedrock provider end to end (SigV4 checked by the AWS signer, event-stream frames, openai and anthropic SDKs)', () => {
  let bedrock: FakeBedrock;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    bedrock = await new FakeBedrock(KEYS, 'eu-west-1').start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'app' })
      .withProvider({ id: 'aws', type: 'bedrock', baseUrl: bedrock.server.url, region: 'eu-west-1', ...KEYS })
      .withModel('claude-on-aws', { model: MODEL, price: PRICE })
      // priced from the bundled table
      .withModel('claude-listed-on-aws', { model: MODEL })
      .withModel('llama-on-aws', { model: 'meta.llama3-3-70b-instruct-v1:0', price: PRICE })
      .withProvider({ id: 'aws-wrong-secret', type: 'bedrock', baseUrl: bedrock.server.url, region: 'eu-west-1', accessKeyId: KEYS.accessKeyId, secretAccessKey: 'wrong-secret-CANARY-zzzzzzzzzzzz' })
      .withModel('claude-wrong-secret', { model: MODEL })
      .with({ routing: { retries: 0 } })
      .start({ clock: { now: () => NOW_MS } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await bedrock.close();
  });
  beforeEach(() => {
    bedrock.server.requests.length = 0;
    bedrock.checks.length = 0;
  });

  it('signs Converse with SigV4 for the region, and answers with the translated completion priced with cache tokens', async () => {
    bedrock.reply(() => json(readFixture('bedrock', 'text-cache-usage.upstream-response.json')));
    const request = readFixture('bedrock', 'system-cache-images.chat-request.json');
    const { data, response } = await openai.chat.completions.create({ ...request, model: 'claude-on-aws' }).withResponse();
    expect(bedrock.checks).to.deep.equal([{ ok: true, credentialScope: `${KEYS.accessKeyId}/eu-west-1/bedrock` }]);
    expect(bedrock.server.last.path).to.equal(`${MODEL_PATH}/converse`);
    // Claude is asked which stop sequence ended its answer (the golden file is a model's that is not Claude)
    expect(bedrock.server.last.body).to.deep.equal({ ...readFixture<object>('bedrock', 'system-cache-images.upstream-request.json'), additionalModelResponseFieldPaths: ['/stop_sequence'] });
    expect(data.id).to.match(/^chatcmpl-[0-9a-f-]{36}$/);
    expect({ ...data, id: 'chatcmpl-test', created: 1700000000 }).to.deep.equal(readFixture('bedrock', 'text-cache-usage.chat-response.json'));
    // 20 input x $3 + 2000 cache reads x $0.30 + 100 cache writes x $3.75 + 7 output x $15, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00114');
  });

  it('streams ConverseStream frames cut across chunks: the openai SDK assembles the tool calls; the stream is priced', async () => {
    bedrock.reply(() => converseStream('tool-use'));
    const completion = await openai.chat.completions.stream({ model: 'claude-on-aws', messages: [{ role: 'user', content: 'Weather in Paris and Tokyo?' }] }).finalChatCompletion();
    expect(bedrock.server.last.path).to.equal(`${MODEL_PATH}/converse-stream`);
    expect(bedrock.checks.every((c) => c.ok)).to.equal(true);
    const message = completion.choices[0].message;
    expect(message.content).to.equal('Checking.');
    expect(message.tool_calls?.map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) } : c))).to.deep.equal([
      { id: 'tooluse_p1', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'tooluse_t2', name: 'get_weather', args: { city: 'Tokyo' } },
    ]);
    expect(completion.choices[0].finish_reason).to.equal('tool_calls');

    const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'claude-on-aws', stream: true, messages: [{ role: 'user', content: 'Weather?' }] }, CLIENT_KEY);
    // 300 input x $3 + 60 output x $15, per million
    expect(raw.trailers['x-gateway-response-cost']).to.equal('0.0018');
  });

  it('serves an anthropic SDK client, streamed and not', async () => {
    bedrock.reply(() => converseStream('tool-use'));
    const streamed = await anthropic.messages.stream({ model: 'claude-on-aws', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
    expect(streamed.content.map((b) => (b.type === 'tool_use' ? { id: b.id, input: b.input } : b.type === 'text' ? b.text : b.type))).to.deep.equal([
      'Checking.',
      { id: 'tooluse_p1', input: { city: 'Paris' } },
      { id: 'tooluse_t2', input: { city: 'Tokyo' } },
    ]);
    expect(bedrock.server.last.body.inferenceConfig).to.deep.equal({ maxTokens: 100 });

    bedrock.reply(() => json(readFixture('bedrock', 'text-cache-usage.upstream-response.json')));
    const { data, response } = await anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 100, messages: [{ role: 'user', content: 'Picture?' }] }).withResponse();
    expect(data.content.map((b) => (b.type === 'text' ? b.text : b.type))).to.deep.equal(['thinking', 'A cat on a sofa.']);
    expect({ input: data.usage.input_tokens, read: data.usage.cache_read_input_tokens, write: data.usage.cache_creation_input_tokens, output: data.usage.output_tokens }).to.deep.equal({ input: 20, read: 2000, write: 100, output: 7 });
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00114');
  });

  it('tells a Messages client which stop sequence ended Claude\u2019s answer (stop_reason stop_sequence), JSON and streamed', async () => {
    // Converse says only `stop_sequence`; Claude names the sequence when the request asks for its /stop_sequence
    const named = (request: { body: { additionalModelResponseFieldPaths?: string[] } }) => (request.body.additionalModelResponseFieldPaths?.includes('/stop_sequence') ? { stop_sequence: 'END' } : undefined);
    const usage = { inputTokens: 12, outputTokens: 4, totalTokens: 16 };
    bedrock.reply((request) => json({ output: { message: { role: 'assistant', content: [{ text: 'one, two, three' }] } }, stopReason: 'stop_sequence', additionalModelResponseFields: named(request), usage }));
    const data = await anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 100, stop_sequences: ['STOP', 'END'], messages: [{ role: 'user', content: 'Count, then say END.' }] });
    expect(bedrock.server.last.body.inferenceConfig.stopSequences).to.deep.equal(['STOP', 'END']);
    expect({ stop_reason: data.stop_reason, stop_sequence: data.stop_sequence }).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'END' });

    bedrock.reply((request) =>
      eventStream([
        eventMessage('messageStart', { role: 'assistant' }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'one, two' } }),
        eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
        eventMessage('messageStop', { stopReason: 'stop_sequence', additionalModelResponseFields: named(request) }),
        eventMessage('metadata', { usage, metrics: { latencyMs: 10 } }),
      ]),
    );
    const streamed = await anthropic.messages.stream({ model: 'claude-on-aws', max_tokens: 100, stop_sequences: ['STOP', 'END'], messages: [{ role: 'user', content: 'Count, then say END.' }] }).finalMessage();
    expect({ stop_reason: streamed.stop_reason, stop_sequence: streamed.stop_sequence }).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
  });

  it('prices 1-hour cache writes (Converse cacheDetails) at their own price, for an openai and an anthropic SDK client', async () => {
    const usage = { inputTokens: 100, outputTokens: 50, totalTokens: 3150, cacheReadInputTokens: 0, cacheWriteInputTokens: 3000, cacheDetails: [{ ttl: '1h', inputTokens: 2000 }, { ttl: '5m', inputTokens: 1000 }] };
    const answer = { output: { message: { role: 'assistant', content: [{ text: 'Noted.' }] } }, stopReason: 'end_turn', usage };
    bedrock.reply(() => json(answer));
    const chat = await openai.chat.completions.create({ model: 'claude-listed-on-aws', messages: [{ role: 'user', content: 'Summarise chapter 1.' }] }).withResponse();
    // 100 input x $3 + 1000 5-minute writes x $3.75 + 2000 1-hour writes x $6 + 50 output x $15, per million
    expect(chat.response.headers.get('x-gateway-response-cost')).to.equal('0.0168');

    bedrock.reply(() => json(answer));
    const messages = await anthropic.messages.create({ model: 'claude-listed-on-aws', max_tokens: 100, messages: [{ role: 'user', content: 'Summarise chapter 1.' }] }).withResponse();
    expect(messages.data.usage).to.include({ input_tokens: 100, cache_creation_input_tokens: 3000, output_tokens: 50 });
    expect(messages.response.headers.get('x-gateway-response-cost')).to.equal('0.0168');
  });

  it('passes a Messages client\u2019s thinking to Claude on Bedrock and brings the reasoning back as signed thinking blocks, JSON and streamed', async () => {
    const reasoning = [
      { reasoningContent: { reasoningText: { text: '17 * 23: 17 * 20 + 17 * 3.', signature: 'sig-bedrock-1' } } },
      { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
      { text: '391' },
    ];
    bedrock.reply(() => json({ output: { message: { role: 'assistant', content: reasoning } }, stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 40, totalTokens: 52 } }));
    const question = { role: 'user' as const, content: '17 * 23?' };
    const data = await anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 4000 }, messages: [question] });
    // Converse has no thinking field: Claude's own goes in additionalModelRequestFields
    expect(bedrock.server.last.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 4096 } });
    expect(bedrock.server.last.body.inferenceConfig).to.deep.equal({ maxTokens: 8000 });
    expect(data.content).to.deep.equal([
      { type: 'thinking', thinking: '17 * 23: 17 * 20 + 17 * 3.', signature: 'sig-bedrock-1' },
      { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
      { type: 'text', text: '391' },
    ]);

    // the next turn passes the blocks back, signatures unchanged, ahead of the assistant's text
    bedrock.reply(() => json({ output: { message: { role: 'assistant', content: [{ text: 'Yes.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 60, outputTokens: 2, totalTokens: 62 } }));
    await anthropic.messages.create({
      model: 'claude-on-aws',
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 4000 },
      messages: [question, { role: 'assistant', content: data.content as Anthropic.ContentBlockParam[] }, { role: 'user', content: 'Sure?' }],
    });
    expect(bedrock.server.last.body.messages[1]).to.deep.equal({ role: 'assistant', content: reasoning });

    // a chat client's reasoning_effort turns it on as on Anthropic's own API; other models still refuse it
    bedrock.reply(() => json({ output: { message: { role: 'assistant', content: reasoning } }, stopReason: 'end_turn', usage: { inputTokens: 12, outputTokens: 40, totalTokens: 52 } }));
    const chat = await openai.chat.completions.create({ model: 'claude-on-aws', reasoning_effort: 'low', messages: [question] });
    expect(bedrock.server.last.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(bedrock.server.last.body.inferenceConfig).to.deep.equal({ maxTokens: 4096 + 1024 });
    expect(chat.choices[0].message).to.deep.include({ content: '391', reasoning_content: '17 * 23: 17 * 20 + 17 * 3.' });
    const refused = await rejection(openai.chat.completions.create({ model: 'llama-on-aws', reasoning_effort: 'low', messages: [question] }));
    expect(refused).to.include({ status: 400 });

    bedrock.reply(() =>
      eventStream([
        eventMessage('messageStart', { role: 'assistant' }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: '17 * 23: ' } } }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: '17 * 20 + 17 * 3.' } } }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-bedrock-2' } } }),
        eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 1, delta: { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } } }),
        eventMessage('contentBlockStop', { contentBlockIndex: 1 }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 2, delta: { text: '391' } }),
        eventMessage('contentBlockStop', { contentBlockIndex: 2 }),
        eventMessage('messageStop', { stopReason: 'end_turn' }),
        eventMessage('metadata', { usage: { inputTokens: 12, outputTokens: 40, totalTokens: 52 }, metrics: { latencyMs: 300 } }),
      ]),
    );
    const streamed = await anthropic.messages.stream({ model: 'claude-on-aws', max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 4000 }, messages: [question] }).finalMessage();
    expect(bedrock.server.last.body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 4096 } });
    expect(streamed.content).to.deep.equal([
      { type: 'thinking', thinking: '17 * 23: 17 * 20 + 17 * 3.', signature: 'sig-bedrock-2' },
      { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
      { type: 'text', text: '391' },
    ]);
  });

  it('streams a call of a tool without arguments (Converse sends no input delta for it) with "{}" as its arguments, as a JSON answer has', async () => {
    const noInput = () =>
      eventStream([
        eventMessage('messageStart', { role: 'assistant' }),
        eventMessage('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_now1', name: 'get_time' } } }),
        eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
        eventMessage('messageStop', { stopReason: 'tool_use' }),
        eventMessage('metadata', { usage: { inputTokens: 30, outputTokens: 5, totalTokens: 35 } }),
      ]);
    bedrock.reply(noInput);
    const completion = await openai.chat.completions.stream({ model: 'claude-on-aws', messages: [{ role: 'user', content: 'What time is it?' }] }).finalChatCompletion();
    const call = completion.choices[0].message.tool_calls?.[0];
    expect(call?.type === 'function' ? { id: call.id, name: call.function.name, arguments: call.function.arguments } : call).to.deep.equal({ id: 'tooluse_now1', name: 'get_time', arguments: '{}' });

    bedrock.reply(noInput);
    const message = await anthropic.messages.stream({ model: 'claude-on-aws', max_tokens: 100, messages: [{ role: 'user', content: 'What time is it?' }] }).finalMessage();
    expect(message.content).to.deep.equal([{ type: 'tool_use', id: 'tooluse_now1', name: 'get_time', input: {} }]);
  });

  it('sends a tool answer with no output, and blank text parts, without the blank text blocks Converse refuses', async () => {
    // Converse refuses a text block that is empty or only whitespace, wherever it sits
    bedrock.reply((request) => {
      const blocks = [...(request.body.system ?? []), ...(request.body.messages as { content: Record<string, any>[] }[]).flatMap((m) => m.content.flatMap((b) => [b, ...(b.toolResult?.content ?? [])]))];
      if (blocks.some((b) => typeof b.text === 'string' && b.text.trim() === '')) {
        return json({ message: 'The text field in the ContentBlock object at messages.2.content.0 is blank. Add text to the text field, and try again.' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const data = await openai.chat.completions.create({
      model: 'claude-on-aws',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: '' }] },
        { role: 'user', content: 'Clear the cache.' },
        { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'tooluse_c1', type: 'function', function: { name: 'clear_cache', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_c1', content: '' },
        { role: 'user', content: [{ type: 'text', text: ' ' }, { type: 'text', text: 'Done?' }] },
      ],
    });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    const [, calls, results] = bedrock.server.last.body.messages as { content: Record<string, any>[] }[];
    expect(calls.content).to.deep.equal([{ toolUse: { toolUseId: 'tooluse_c1', name: 'clear_cache', input: {} } }]);
    expect(results.content).to.deep.equal([{ toolResult: { toolUseId: 'tooluse_c1', content: [] } }, { text: 'Done?' }]);
  });

  it('sends an image under the format its bytes have, whatever type its data: URL names, as Claude on Bedrock refuses a mismatch', async () => {
    const JPEG = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJCAsIyccHCg3KSwwMTQ0NB8nOT04MjwuMzQy';
    const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const MAGIC: Record<string, string> = { jpeg: '/9j/', png: 'iVBORw0KGgo' };
    // Claude on Bedrock checks the bytes against the declared format (what Bedrock answers, as measured)
    bedrock.reply((request) => {
      const images = (request.body.messages as { content: Record<string, any>[] }[]).flatMap((m) => m.content.filter((b) => b.image));
      const wrong = images.find((b) => !String(b.image.source.bytes).startsWith(MAGIC[b.image.format] ?? '\0'));
      if (wrong) {
        return json({ message: `The model returned the following errors: messages.0.content.1.image.source.base64.media_type: Image does not match the provided media type image/${wrong.image.format}` }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    // chat clients name a data: URL after the file's extension, or always image/png; OpenAI reads the bytes
    const data = await openai.chat.completions.create({
      model: 'claude-on-aws',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these pictures?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${JPEG}` } },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    const [{ content }] = bedrock.server.last.body.messages as { content: Record<string, any>[] }[];
    expect(content.slice(1)).to.deep.equal([{ image: { format: 'jpeg', source: { bytes: JPEG } } }, { image: { format: 'png', source: { bytes: PNG } } }]);
  });

  it('sends a PDF as a document block, from a chat file part and from a Messages document block, each under a name Converse takes, once', async () => {
    const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n').toString('base64');
    // what Bedrock answers to a document name it does not take, or to one used twice (its DocumentBlock reference)
    bedrock.reply((request) => {
      const names = (request.body.messages as { content: Record<string, any>[] }[]).flatMap((m) => m.content.filter((b) => b.document).map((b) => String(b.document.name)));
      const errorType = { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' };
      if (names.some((name) => !/^[A-Za-z0-9()[\]-]+( [A-Za-z0-9()[\]-]+)*$/.test(name) || name.length > 200)) {
        return json({ message: 'The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can\'t contain more than one consecutive whitespace character.' }, 400, errorType);
      }
      if (new Set(names).size < names.length) return json({ message: "Messages can't contain duplicate document names. Rename the document and retry your request." }, 400, errorType);
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const file = (filename?: string) => ({ type: 'file' as const, file: { ...(filename ? { filename } : {}), file_data: `data:application/pdf;base64,${PDF}` } });
    const data = await openai.chat.completions.create({
      model: 'claude-on-aws',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Compare these.' }, file('q3_report.v2.pdf'), file('q3_report.v2.pdf'), file()] },
        { role: 'assistant', content: 'They are the same report.' },
        { role: 'user', content: [file(), { type: 'text', text: 'And this one?' }] },
      ],
    });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    const documents = (bedrock.server.last.body.messages as { content: Record<string, any>[] }[]).flatMap((m) => m.content.filter((b) => b.document).map((b) => b.document));
    expect(documents).to.deep.equal([
      { format: 'pdf', name: 'q3-report-v2', source: { bytes: PDF } },
      { format: 'pdf', name: 'q3-report-v2 (2)', source: { bytes: PDF } },
      { format: 'pdf', name: 'document', source: { bytes: PDF } },
      { format: 'pdf', name: 'document (2)', source: { bytes: PDF } },
    ]);

    const message = await anthropic.messages.create({
      model: 'claude-on-aws',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Annual report 2025.pdf' }, { type: 'text', text: 'Summarise it.' }] }],
    });
    expect(message.content.find((block) => block.type === 'text')).to.deep.include({ text: 'A cat on a sofa.' });
    expect((bedrock.server.last.body.messages as { content: Record<string, any>[] }[])[0].content).to.deep.equal([
      { document: { format: 'pdf', name: 'Annual report 2025', source: { bytes: PDF } } },
      { text: 'Summarise it.' },
    ]);

    const sent = bedrock.server.requests.length;
    const err = await rejection(openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc123' } }] }] }));
    expect(err.status).to.equal(400);
    expect(err.error).to.include({ code: 'unsupported_content', param: 'messages[0].content[0].file' });
    expect(bedrock.server.requests.length).to.equal(sent);
  });

  it('leaves out a sampling default sent beside the other setting, which recent Claude models on Bedrock refuse together; other models get both', async () => {
    // Claude Sonnet 4.5 and later on Bedrock, as measured
    bedrock.reply((request) => {
      const config = request.body.inferenceConfig ?? {};
      if (String(request.path).includes('claude') && config.temperature !== undefined && config.topP !== undefined) {
        return json({ message: 'The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one.' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const sent: unknown[] = [];
    // chat UIs send OpenAI's default of one beside the one the user set
    for (const sampling of [{ temperature: 0.7, top_p: 1 }, { temperature: 1, top_p: 0.9 }]) {
      const data = await openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'user', content: 'Hi' }], ...sampling });
      expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
      sent.push(bedrock.server.last.body.inferenceConfig);
    }
    expect(sent).to.deep.equal([{ temperature: 0.7 }, { topP: 0.9 }]);
    await openai.chat.completions.create({ model: 'llama-on-aws', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.7, top_p: 1 });
    expect(bedrock.server.last.body.inferenceConfig).to.deep.equal({ temperature: 0.7, topP: 1 });
  });

  it('answers a request that is only a system message (OpenAI takes one; Claude refuses one without messages) with the message as the prompt', async () => {
    bedrock.reply((request) => {
      if (!Array.isArray(request.body.messages) || request.body.messages.length === 0) {
        return json({ message: 'The model returned the following errors: messages: at least one message is required' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const data = await openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'system', content: 'Write a haiku about the sea.' }] });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    expect(bedrock.server.last.body.messages).to.deep.equal([{ role: 'user', content: [{ text: 'Write a haiku about the sea.' }] }]);
    expect(bedrock.server.last.body.system).to.equal(undefined);
  });

  it('answers a conversation that starts with the assistant\u2019s greeting, which Converse refuses as sent, with the greeting kept', async () => {
    // Bedrock: "A conversation must start with a user message. Try again with a conversation that starts with a user message."
    bedrock.reply((request) => {
      const messages = request.body.messages as { role: string; content: Record<string, any>[] }[];
      if (messages[0]?.role !== 'user') {
        return json({ message: 'A conversation must start with a user message. Try again with a conversation that starts with a user message.' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const history = [
      { role: 'assistant' as const, content: 'Hello! How can I help you today?' },
      { role: 'user' as const, content: 'Describe the picture.' },
    ];
    const data = await openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'system', content: 'Be brief.' }, ...history] });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    const sent = bedrock.server.last.body.messages as { role: string; content: Record<string, any>[] }[];
    // the greeting reaches the model as its own earlier turn, after a user turn that says nothing more
    expect(sent.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(sent.slice(1)).to.deep.equal([{ role: 'assistant', content: [{ text: 'Hello! How can I help you today?' }] }, { role: 'user', content: [{ text: 'Describe the picture.' }] }]);
    expect(sent[0].content).to.have.length(1);
    expect(sent[0].content[0].text).to.be.a('string').and.match(/\S/);
    // the same history from an Anthropic client (which Claude's own API takes as it is)
    const message = await anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 100, messages: history });
    expect(message.content.filter((b) => b.type === 'text')).to.deep.equal([{ type: 'text', text: 'A cat on a sofa.' }]);
  });

  it('continues a conversation whose tool call ids another model made (Kimi, Gemini with a thought signature): ids Bedrock refuses are mapped, calls and results still matched', async () => {
    // Converse's toolUseId: 1 to 64 of [a-zA-Z0-9_-]; anything else is Bedrock's ValidationException
    const TOOL_USE_ID = /^[a-zA-Z0-9_-]{1,64}$/;
    bedrock.reply((request) => {
      const ids = (request.body.messages as { content: Record<string, any>[] }[]).flatMap((m) => m.content.map((b) => b.toolUse?.toolUseId ?? b.toolResult?.toolUseId).filter((id) => id !== undefined));
      if (ids.some((id) => !TOOL_USE_ID.test(id))) {
        return json({ message: '1 validation error detected: Value at \'messages.2.member.content.1.member.toolUse.toolUseId\' failed to satisfy constraint' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      }
      return json(readFixture('bedrock', 'text-cache-usage.upstream-response.json'));
    });
    const kimiId = 'functions.get_weather:0';
    const geminiId = `call_r1_1__thought__${'CpQBAdHtim+9/pXz='.repeat(12)}`;
    const data = await openai.chat.completions.create({
      model: 'claude-on-aws',
      messages: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: kimiId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: geminiId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: kimiId, content: '{"temp":18}' },
        { role: 'tool', tool_call_id: geminiId, content: '{"temp":22}' },
      ],
    });
    expect(data.choices[0].message.content).to.equal('A cat on a sofa.');
    const [, calls, results] = bedrock.server.last.body.messages as { content: Record<string, any>[] }[];
    const callIds = calls.content.map((b) => b.toolUse.toolUseId);
    expect(results.content.map((b) => b.toolResult.toolUseId)).to.deep.equal(callIds);
    expect(callIds[0]).to.not.equal(callIds[1]);
    expect(callIds.every((id) => TOOL_USE_ID.test(id))).to.equal(true);
  });

  describe('errors, in each API\u2019s own shape', () => {
    it('throttling is a 429 with Bedrock\u2019s Retry-After, for a JSON call and for a stream that throttles at once', async () => {
      bedrock.reply(() => json({ message: 'Too many requests, please wait before trying again.' }, 429, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/', 'retry-after': '3' }));
      const err = await rejection(openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'user', content: 'hi' }] }));
      expect({ status: err.status, code: err.error.code, retryAfter: err.headers.get('retry-after') }).to.deep.equal({ status: 429, code: 'upstream_rate_limited', retryAfter: '3' });

      bedrock.reply(() => eventStream([exceptionMessage('throttlingException', 'Too many tokens, please wait before trying again.')]));
      const streamed = await rejection(anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
      expect(streamed.status).to.equal(429);
      expect(streamed.error).to.deep.equal({ type: 'error', error: { type: 'rate_limit_error', message: 'The Bedrock upstream throttled the request: Too many tokens, please wait before trying again.' } });
    });

    it('a malformed tool call or output with nothing said is a 502 the openai SDK can retry, and an error in a stream, not an empty stop', async () => {
      // Converse's stopReason when the model's tool call or output did not parse
      const usage = { inputTokens: 40, outputTokens: 12, totalTokens: 52 };
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      bedrock.reply(() => json({ output: { message: { role: 'assistant', content: [] } }, stopReason: 'malformed_tool_use', usage }));
      const err = await rejection(openai.chat.completions.create({ model: 'claude-on-aws', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }));
      expect({ status: err.status, code: err.error.code, message: err.error.message }).to.deep.equal({ status: 502, code: 'upstream_error', message: 'The Bedrock model stopped without an answer (malformed_tool_use).' });

      bedrock.reply(() => eventStream([eventMessage('messageStart', { role: 'assistant' }), eventMessage('messageStop', { stopReason: 'malformed_model_output' }), eventMessage('metadata', { usage })]));
      const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'claude-on-aws', stream: true, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }, CLIENT_KEY);
      expect(raw.text).to.include('The Bedrock model stopped without an answer (malformed_model_output).');
      expect(raw.text).to.not.include('"finish_reason":"stop"');
      expect(raw.text).to.not.include('[DONE]');

      // what the model said before it failed is kept, with its finish
      bedrock.reply(() => json({ output: { message: { role: 'assistant', content: [{ text: 'Let me check.' }] } }, stopReason: 'malformed_tool_use', usage }));
      const partial = await openai.chat.completions.create({ model: 'claude-on-aws', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      expect(partial.choices[0].message.content).to.equal('Let me check.');
    });

    it('an exception after the stream started ends it with an error event', async () => {
      bedrock.reply(() => eventStream([eventMessage('messageStart', { role: 'assistant' }), eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }), exceptionMessage('modelStreamErrorException', 'The model failed mid-answer.')]));
      const raw = await streamTrailers(gw.url, '/v1/chat/completions', { model: 'claude-on-aws', stream: true, messages: [{ role: 'user', content: 'hi' }] }, CLIENT_KEY);
      expect(raw.status).to.equal(200);
      expect(raw.text).to.include('"Hel"');
      expect(raw.text).to.include('"code":"upstream_stream_error"');
      expect(raw.text).to.include('The Bedrock upstream failed (modelstreamerrorexception): The model failed mid-answer.');
      expect(raw.text).to.not.include('[DONE]');
    });

    it('a signature Bedrock refuses is the gateway\u2019s 502, and the secret appears nowhere', async () => {
      bedrock.reply(() => json({}));
      const err = await rejection(openai.chat.completions.create({ model: 'claude-wrong-secret', messages: [{ role: 'user', content: 'hi' }] }));
      expect(bedrock.checks.map((c) => c.ok)).to.deep.equal([false]);
      expect({ status: err.status, code: err.error.code }).to.deep.equal({ status: 502, code: 'upstream_auth_failed' });
      const everything = JSON.stringify(err.error) + gw.logLines.join('\n');
      expect(everything).to.not.include('wrong-secret-CANARY');
      expect(everything).to.not.include(KEYS.secretAccessKey);
    });

    it('a prompt over the context window is 400 context_length_exceeded', async () => {
      bedrock.reply(() => json({ message: 'Input is too long for requested model.' }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }));
      const err = await rejection(openai.chat.completions.create({ model: 'claude-on-aws', messages: [{ role: 'user', content: 'long' }] }));
      expect({ status: err.status, code: err.error.code }).to.deep.equal({ status: 400, code: 'context_length_exceeded' });
    });

    it('a prompt over the context window reaches a Messages client (Claude Code) in Anthropic\u2019s words, so it compacts', async () => {
      const cases: [bedrockMessage: string, clientMessage: string][] = [
        ['Input is too long for requested model.', 'prompt is too long for the model\'s context window: Input is too long for requested model.'],
        // Claude's own words behind Bedrock's preface: as Claude says them
        ['The model returned the following errors: prompt is too long: 208310 tokens > 200000 maximum', 'prompt is too long: 208310 tokens > 200000 maximum'],
      ];
      for (const [bedrockMessage, clientMessage] of cases) {
        bedrock.reply(() => json({ message: bedrockMessage }, 400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }));
        const err = await rejection(anthropic.messages.create({ model: 'claude-on-aws', max_tokens: 100, messages: [{ role: 'user', content: 'long' }] }));
        expect({ status: err.status, error: err.error }).to.deep.equal({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: clientMessage } } });
      }
    });
  });

  describe('credentials from the standard AWS environment variables', () => {
    const NAMES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'] as const;
    const saved = new Map<string, string | undefined>();
    let envBedrock: FakeBedrock;
    let envGw: TestGateway;

    before(async () => {
      const keys = { accessKeyId: 'AKIAFAKEFROMENV00002', secretAccessKey: 'env/secret/CANARY/abcdefghijklmnop', sessionToken: 'FwoGZXIvYXdzEFAKESESSIONTOKEN' };
      for (const name of NAMES) saved.set(name, process.env[name]);
      process.env.AWS_ACCESS_KEY_ID = keys.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = keys.secretAccessKey;
      process.env.AWS_SESSION_TOKEN = keys.sessionToken;
      envBedrock = await new FakeBedrock(keys, 'us-west-2').start();
      envGw = await testConfig()
        .withKey(CLIENT_KEY)
        .withProvider({ id: 'aws-env', type: 'bedrock', baseUrl: envBedrock.server.url, region: 'us-west-2' })
        .withModel('claude-env', { model: MODEL })
        .start();
    });
    after(async () => {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await envGw.close();
      await envBedrock.close();
    });

    it('signs with the environment\u2019s keys and session token when the provider has none', async () => {
      envBedrock.reply(() => json(readFixture('bedrock', 'tool-use.upstream-response.json')));
      const client = new OpenAI({ baseURL: `${envGw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
      const data = await client.chat.completions.create({ model: 'claude-env', messages: [{ role: 'user', content: 'Weather?' }] });
      expect(envBedrock.checks).to.deep.equal([{ ok: true, credentialScope: 'AKIAFAKEFROMENV00002/us-west-2/bedrock' }]);
      expect(envBedrock.server.last.headers['x-amz-security-token']).to.equal('FwoGZXIvYXdzEFAKESESSIONTOKEN');
      expect(data.choices[0].message.tool_calls?.length).to.equal(2);
    });
  });
});
