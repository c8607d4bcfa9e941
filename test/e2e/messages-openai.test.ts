import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawPost, sseEvents } from './messages-support';

const PROVIDER_KEY = 'sk-oai-provider-CANARY-0c3d';
const CLIENT_KEY = 'sk-client-CANARY-4e19';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('Messages endpoint, OpenAI-compatible model: translated (Anthropic SDK, fake OpenAI upstream)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: Anthropic;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'agent' })
      .withOpenAI('oai', upstream, PROVIDER_KEY)
      .withModel('gpt-test', { model: 'upstream-model', id: 'oai/upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.5 } })
      .with({
        // error mapping is under test here, not the router's retries
        routing: { retries: 0 },
      })
      .start();
    client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('Hello from upstream') };
  });

  it('runs a multi-turn tool round trip: tool_use out, tool_result back, final answer', async () => {
    // turn 1: the model asks for the tool
    upstream.script = {
      kind: 'json',
      body: {
        ...chatCompletion('', { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62 }),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
        ],
      },
    };
    const first = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(upstream.last.path).to.equal('/v1/chat/completions');
    expect(upstream.last.headers.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
    expect(upstream.last.body).to.deep.equal({
      model: 'upstream-model',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_TOOL.input_schema } }],
      tool_choice: 'auto',
    });
    expect(first).to.deep.equal({
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: 'upstream-model',
      content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 50, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });

    // turn 2: the client runs the tool and sends the result back
    upstream.script = { kind: 'json', body: chatCompletion('It is 18C and sunny in Paris.', { prompt_tokens: 80, completion_tokens: 10, total_tokens: 90 }) };
    const second = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 1024,
      system: 'You are a weather bot.',
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18C, sunny' }] },
      ],
    });
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '18C, sunny' },
    ]);
    expect(second.content).to.deep.equal([{ type: 'text', text: 'It is 18C and sunny in Paris.' }]);
    expect(second.stop_reason).to.equal('end_turn');
  });

  it('tells the model which tool failed: a tool_result with is_error reaches it marked as an error, text or blocks, empty or not', async () => {
    const call = (id: string) => ({ type: 'tool_use' as const, id, name: 'get_weather', input: { city: 'Paris' } });
    await client.messages.create({
      model: 'gpt-test',
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [
        { role: 'user', content: 'Weather in Paris, three times?' },
        { role: 'assistant', content: [call('call_a'), call('call_b'), call('call_c'), call('call_d')] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '503 from the weather service', is_error: true },
            { type: 'tool_result', tool_use_id: 'call_b', content: [{ type: 'text', text: 'no such city' }], is_error: true },
            { type: 'tool_result', tool_use_id: 'call_c', is_error: true },
            { type: 'tool_result', tool_use_id: 'call_d', content: '18C', is_error: false },
          ],
        },
      ],
    });
    expect(upstream.last.body.messages.slice(2)).to.deep.equal([
      { role: 'tool', tool_call_id: 'call_a', content: 'Error: 503 from the weather service' },
      { role: 'tool', tool_call_id: 'call_b', content: 'Error: no such city' },
      { role: 'tool', tool_call_id: 'call_c', content: 'Error' },
      { role: 'tool', tool_call_id: 'call_d', content: '18C' },
    ]);
  });

  it('translates images (base64 and URL), stop sequences and metadata.user_id', async () => {
    const request = readFixture('messages', 'images.messages-request.json');
    await client.messages.create({ ...request, model: 'gpt-test', stop_sequences: ['END'], metadata: { user_id: 'user-42' } });
    expect(upstream.last.body).to.deep.equal({ ...readFixture('messages', 'images.chat-request.json'), model: 'upstream-model', stop: ['END'], user: 'user-42' });
  });

  it('answers stop_reason stop_sequence with the sequence when a vLLM upstream names the stop string it matched, JSON and streamed', async () => {
    const request = { model: 'gpt-test', max_tokens: 64, stop_sequences: ['Observation:', 'END'], messages: [{ role: 'user' as const, content: 'Think, then act.' }] };
    // vLLM's choice names the stop string that ended the answer (`stop_reason`; null at the end of a turn)
    const matched = (stopReason: string | null) => ({ ...chatCompletion('Action: search'), choices: [{ index: 0, message: { role: 'assistant', content: 'Action: search' }, logprobs: null, finish_reason: 'stop', stop_reason: stopReason }] });
    upstream.script = { kind: 'json', body: matched('Observation:') };
    const answer = await client.messages.create(request);
    expect({ stop_reason: answer.stop_reason, stop_sequence: answer.stop_sequence }).to.deep.equal({ stop_reason: 'stop_sequence', stop_sequence: 'Observation:' });
    upstream.script = { kind: 'json', body: matched(null) };
    const ended = await client.messages.create(request);
    expect({ stop_reason: ended.stop_reason, stop_sequence: ended.stop_sequence }).to.deep.equal({ stop_reason: 'end_turn', stop_sequence: null });
    // tool calls wait for their results, whatever ended the answer
    const withCall = matched('Observation:');
    withCall.choices[0].message = { ...withCall.choices[0].message, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } as any;
    upstream.script = { kind: 'json', body: withCall };
    const called = await client.messages.create({ ...request, tools: [WEATHER_TOOL] });
    expect({ stop_reason: called.stop_reason, stop_sequence: called.stop_sequence }).to.deep.equal({ stop_reason: 'tool_use', stop_sequence: null });

    const events = chatChunks(['Action:', ' search'], { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 }) as any[];
    events[3] = { ...events[3], choices: [{ ...events[3].choices[0], stop_reason: 'Observation:' }] };
    upstream.script = { kind: 'sse', events };
    const streamed = await client.messages.stream(request).finalMessage();
    expect({ text: streamed.content, stop_reason: streamed.stop_reason, stop_sequence: streamed.stop_sequence }).to.deep.equal({
      text: [{ type: 'text', text: 'Action: search' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'Observation:',
    });
  });

  it('sends a base64 PDF document block as a chat file part (file_data as a data URL), its title as the filename', async () => {
    const pdf = Buffer.from('%PDF-1.4 fake').toString('base64');
    const message = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }, { type: 'text', text: 'Summarise it.' }] }],
    });
    expect(message.content.map((b) => (b.type === 'text' ? b.text : b.type))).to.deep.equal(['Hello from upstream']);
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'user', content: [{ type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${pdf}` } }, { type: 'text', text: 'Summarise it.' }] },
    ]);
  });

  it('sends documents a tool returned (Claude Code\u2019s Read of a PDF) as it sends them in a user turn: text in the tool message, a PDF as a file part after it', async () => {
    const pdf = Buffer.from('%PDF-1.4 fake').toString('base64');
    const message = await client.messages.create({
      model: 'gpt-test',
      max_tokens: 100,
      tools: [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'Summarise report.pdf and notes.txt.' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_pdf', name: 'read', input: { path: 'report.pdf' } },
            { type: 'tool_use', id: 'call_txt', name: 'read', input: { path: 'notes.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_pdf', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }] },
            { type: 'tool_result', tool_use_id: 'call_txt', content: [{ type: 'document', title: 'notes.txt', source: { type: 'text', media_type: 'text/plain', data: 'Ship on Friday.' } }] },
          ],
        },
      ],
    });
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Hello from upstream' }]);
    expect(upstream.last.body.messages.slice(2)).to.deep.equal([
      { role: 'tool', tool_call_id: 'call_pdf', content: '' },
      { role: 'tool', tool_call_id: 'call_txt', content: 'notes.txt\n\nShip on Friday.' },
      { role: 'user', content: [{ type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}` } }] },
    ]);
  });

  it('sends a metadata.user_id longer than OpenAI\u2019s 64-character user (Claude Code\u2019s) as a stable id of 64', async () => {
    upstream.script = (req) => {
      const user = req.body.user;
      // what api.openai.com answers
      if (typeof user === 'string' && user.length > 64) {
        const message = `Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length ${user.length} instead.`;
        return { kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error', param: 'user', code: 'string_above_max_length' } } };
      }
      return { kind: 'json', body: chatCompletion('Hello from upstream') };
    };
    const session = (id: string) => `user_${'5f'.repeat(32)}_account_0e6c2a59-4b1d-4f0e-9a57-2d3f1c8e7b6a_session_${id}`;
    const ask = (userId: string) => client.messages.create({ model: 'gpt-test', max_tokens: 64, metadata: { user_id: userId }, messages: [{ role: 'user', content: 'hi' }] });
    const answer = await ask(session('7d9e1f20-3a4b-4c5d-8e6f-708192a3b4c5'));
    expect(answer.content).to.deep.equal([{ type: 'text', text: 'Hello from upstream' }]);
    const sent = upstream.last.body.user;
    expect(sent).to.have.lengthOf(64);
    // the same user is the same id, another is another (OpenAI tells abuse apart by it)
    await ask(session('7d9e1f20-3a4b-4c5d-8e6f-708192a3b4c5'));
    expect(upstream.last.body.user).to.equal(sent);
    await ask(session('00000000-3a4b-4c5d-8e6f-708192a3b4c5'));
    expect(upstream.last.body.user).to.have.lengthOf(64).and.not.equal(sent);
  });

  it('streams a tool call the SDK assembles into the right input, with text before it', async () => {
    upstream.script = { kind: 'sse', events: readFixture<{ data: object }[]>('messages', 'tool-calls.chat-stream.json').slice(0, -1).map((f) => f.data) };
    const stream = client.messages.stream({ model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] });
    const message = await stream.finalMessage();
    expect(upstream.last.body.stream).to.equal(true);
    expect(upstream.last.body.stream_options).to.deep.equal({ include_usage: true });
    // parsed_output and stop_details are the SDK's own additions to the message it assembles
    const { parsed_output: _parsed, stop_details: _details, ...assembled } = message as any;
    expect(assembled).to.deep.equal({
      id: 'msg_s2',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 464, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 1536 },
    });
  });

  it('streams parallel tool calls that come whole without their own index (Gemini\u2019s OpenAI-compatible API) as a tool_use block each', async () => {
    // Gemini's OpenAI-compatible API sends each call whole, with an id but no index, and stops with "stop"
    const base = { id: 'chatcmpl-g1', object: 'chat.completion.chunk', created: 1700000000, model: 'gemini-2.5-flash' };
    const call = (id: string, city: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } });
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [call('function-call-1', 'Paris')] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [call('function-call-2', 'Rome')] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ],
    };
    const message = await client.messages.stream({ model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }).finalMessage();
    expect(message.content).to.deep.equal([
      { type: 'tool_use', id: 'function-call-1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'function-call-2', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    expect(message.stop_reason).to.equal('tool_use');
  });

  it('streams a tool call whole when the upstream sends text while its arguments are still coming', async () => {
    // some OpenAI-compatible servers (vLLM's tool parsers) send text, a newline at least, in the middle of a call
    const base = { id: 'chatcmpl-v1', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const delta = (d: object) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: null }] });
    upstream.script = {
      kind: 'sse',
      events: [
        delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
        delta({ content: '\n', tool_calls: [{ index: 0, function: { arguments: '"Paris"' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ],
    };
    const message = await client.messages.stream({ model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage();
    expect(message.content).to.deep.equal([
      { type: 'tool_use', id: 'call_p', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'text', text: '\n' },
    ]);
    expect(message.stop_reason).to.equal('tool_use');
  });

  it('streams a tool call whole when the upstream sends reasoning while its arguments are still coming', async () => {
    // reasoning servers (interleaved thinking, vLLM's reasoning parsers) may send reasoning in the middle of a call
    const base = { id: 'chatcmpl-r1', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const delta = (d: object) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: null }] });
    upstream.script = {
      kind: 'sse',
      events: [
        delta({ role: 'assistant', reasoning_content: 'Paris, then Rome.' }),
        delta({ tool_calls: [{ index: 0, id: 'call_r1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
        delta({ reasoning_content: ' Paris first.', thinking_blocks: [{ type: 'thinking', thinking: ' Paris first.', signature: 'sig-r1' }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        delta({ tool_calls: [{ index: 1, id: 'call_r2', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
        delta({ reasoning: ' Now Rome.', tool_calls: [{ index: 1, function: { arguments: 'ty":"Rome"}' } }] }),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ],
    };
    const request = { model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris and Rome?' }] };
    const message = await client.messages.stream(request).finalMessage();
    expect(message.content).to.deep.equal([
      { type: 'thinking', thinking: 'Paris, then Rome.', signature: '' },
      { type: 'tool_use', id: 'call_r1', name: 'get_weather', input: { city: 'Paris' } },
      // the reasoning held while call_r1's block was open follows it, ahead of the call held with it
      { type: 'thinking', thinking: ' Paris first.', signature: 'sig-r1' },
      { type: 'thinking', thinking: ' Now Rome.', signature: '' },
      { type: 'tool_use', id: 'call_r2', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    expect(message.stop_reason).to.equal('tool_use');

    // on the wire: every block starts, takes its deltas and stops before the next one starts
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY, 'anthropic-version': '2023-06-01' }, { ...request, stream: true });
    let open: number | undefined;
    let next = 0;
    for (const { data } of await sseEvents(answer.text)) {
      if (data.type === 'content_block_start') {
        expect(open, `block ${data.index} starts inside block ${open}`).to.equal(undefined);
        expect(data.index).to.equal(next++);
        open = data.index;
      } else if (data.type === 'content_block_delta') expect(data.index).to.equal(open);
      else if (data.type === 'content_block_stop') {
        expect(data.index).to.equal(open);
        open = undefined;
      }
    }
    expect(next).to.equal(5);
  });

  it('answers from content given as a list of chunks (Mistral\u2019s reasoning models: thinking, then text), JSON and streamed', async () => {
    // magistral-* answer content as chunks: `thinking` ones holding text parts, then `text` ones
    const thinking = { type: 'thinking', thinking: [{ type: 'text', text: '17 * 23 = 391.' }] };
    upstream.script = {
      kind: 'json',
      body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: [thinking, { type: 'text', text: 'It is 391.' }] }, logprobs: null, finish_reason: 'stop' }] },
    };
    const request = { model: 'gpt-test', max_tokens: 256, messages: [{ role: 'user' as const, content: '17 * 23?' }] };
    const answer = await client.messages.create(request);
    expect(answer.content).to.deep.equal([
      { type: 'thinking', thinking: '17 * 23 = 391.', signature: '' },
      { type: 'text', text: 'It is 391.' },
    ]);

    const base = { id: 'chatcmpl-m1', object: 'chat.completion.chunk', created: 1700000000, model: 'magistral-medium-2509' };
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: [thinking] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: [{ type: 'text', text: 'It is ' }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: '391.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 } },
      ],
    };
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content).to.deep.equal([
      { type: 'thinking', thinking: '17 * 23 = 391.', signature: '' },
      { type: 'text', text: 'It is 391.' },
    ]);
  });

  it('emits the full Anthropic event sequence with a ping, and prices the stream in the trailer', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['Hel', 'lo'], { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }) };
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.match(/^text\/event-stream/);
    const events = await sseEvents(answer.text);
    expect(events).to.deep.equal([
      // a msg_ id, and the prompt estimated (32 characters of messages, 4 a token) until message_delta restates it
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model: 'upstream-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 8, output_tokens: 0 } } } },
      { event: 'ping', data: { type: 'ping' } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 1000, output_tokens: 500, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
    // 1000 x $1 + 500 x $2, per million: the upstream's counts, not the estimate
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.002');
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ promptTokens: 1000, completionTokens: 500 });
    expect(entry.details).to.not.have.property('usageEstimated');
  });

  it('streams an answer whose chat upstream ignored stream: true and sent one JSON document, as the event sequence the SDK assembles, and prices it', async () => {
    upstream.script = {
      kind: 'json',
      body: {
        ...chatCompletion('Let me look.', { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
        ],
      },
    };
    const stream = client.messages.stream({ model: 'gpt-test', max_tokens: 100, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
    const message = await stream.finalMessage();
    expect(upstream.last.body.stream).to.equal(true);
    expect(message.content).to.deep.equal([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call_7', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect({ stop: message.stop_reason, input: message.usage.input_tokens, output: message.usage.output_tokens }).to.deep.equal({ stop: 'tool_use', input: 1000, output: 500 });
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ promptTokens: 1000, completionTokens: 500, cost: 0.002 });
    expect(entry.details ?? {}).to.not.have.property('usageEstimated');
  });

  it('charges a stream whose chat upstream reported no usage from an estimate, as a chat stream\u2019s, not at $0', async () => {
    // an upstream that ignores stream_options (or an Azure api-version older than it): no usage chunk
    upstream.script = { kind: 'sse', events: chatChunks(['x'.repeat(400)]) };
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 200, stream: true, messages: [{ role: 'user', content: 'Write 400 characters.' }] });
    expect(answer.status).to.equal(200);
    const events = await sseEvents(answer.text);
    const announced = events[0].data.message.usage.input_tokens;
    // the client is told the same estimate, not zeros
    expect(events.find((e) => e.event === 'message_delta')!.data.usage).to.deep.equal({ input_tokens: announced, output_tokens: 100 });
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    // 400 characters streamed, about 100 tokens; the prompt from the request
    expect({ completionTokens: entry.completionTokens, estimated: entry.details?.usageEstimated }).to.deep.equal({ completionTokens: 100, estimated: true });
    expect(entry.promptTokens).to.equal(announced);
    expect(Number(answer.trailers['x-gateway-response-cost'])).to.be.above(0);
  });

  it('charges a JSON answer whose chat upstream reported no usage from an estimate, not at $0, and tells the client that estimate', async () => {
    const { usage: _omitted, ...noUsage } = chatCompletion('x'.repeat(400));
    upstream.script = { kind: 'json', body: noUsage };
    const { data, response } = await client.messages.create({ model: 'gpt-test', max_tokens: 200, messages: [{ role: 'user', content: 'Write 400 characters.' }] }).withResponse();
    expect(data.content).to.deep.equal([{ type: 'text', text: 'x'.repeat(400) }]);
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    const [entry] = (await gw.gateway.services.requestLog.query({ limit: 1 })).data;
    // 400 characters answered, about 100 tokens; the prompt from the request
    expect({ completionTokens: entry.completionTokens, estimated: entry.details?.usageEstimated }).to.deep.equal({ completionTokens: 100, estimated: true });
    expect(entry.promptTokens).to.be.within(5, 40);
    // the client is told the same estimate it is charged, as a translated stream tells it, not zeros
    expect(data.usage).to.deep.include({ input_tokens: entry.promptTokens, output_tokens: 100 });
    expect(entry.cost).to.be.greaterThan(0);
    expect(response.headers.get('x-gateway-response-cost')).to.equal(String(entry.cost));
  });

  it('announces an image in message_start as an image\u2019s tokens, not its base64 length, and so charges a cut stream', async () => {
    // about 300 KB of PNG: some 100,000 tokens if its base64 were text, about 1,600 as an image
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo'.repeat(36_000) } };
    const request = { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: [image, { type: 'text', text: 'What is in this picture?' }] }] };
    upstream.script = { kind: 'sse', events: chatChunks(['A cat']), cutAfter: 2 };
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, request);
    const start = (await sseEvents(answer.text))[0];
    expect(start.event).to.equal('message_start');
    expect(start.data.message.usage.input_tokens).to.be.within(1600, 2000);
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry.details).to.deep.include({ usageEstimated: true });
    expect(entry.promptTokens).to.be.within(1600, 2000);
  });

  it('prices cached prompt tokens at the cache-read price on a JSON answer', async () => {
    upstream.script = { kind: 'json', body: readFixture('messages', 'cached-usage.chat-response.json') };
    const { data, response } = await client.messages.create({ model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'Summarise.' }] }).withResponse();
    expect(data).to.deep.equal({ ...readFixture('messages', 'cached-usage.messages-response.json') });
    // 464 uncached x $1 + 1536 cached x $0.50 + 64 output x $2, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.00136');
  });

  it('passes an OpenAI refusal on as a refusal with its text, JSON and streamed', async () => {
    const refusal = 'I cannot help with that request.';
    upstream.script = {
      kind: 'json',
      body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, logprobs: null, finish_reason: 'stop' }] },
    };
    const answer = await client.messages.create({ model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'Fill the form.' }] });
    expect(answer.content).to.deep.equal([{ type: 'text', text: refusal }]);
    expect(answer.stop_reason).to.equal('refusal');

    const base = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { refusal: 'I cannot help ' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { refusal: 'with that request.' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 } },
      ],
    };
    const streamed = await client.messages.stream({ model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: 'Fill the form.' }] }).finalMessage();
    expect(streamed.content).to.deep.equal([{ type: 'text', text: refusal }]);
    expect(streamed.stop_reason).to.equal('refusal');
  });

  it('ends a stream with an error event when the upstream reports an error mid-stream, even if [DONE] follows', async () => {
    // vLLM and OpenAI-compatible proxies send the error as a data chunk, then [DONE]
    upstream.script = { kind: 'sse', events: [...chatChunks(['partial']).slice(0, 2), { error: { message: 'The engine ran out of memory.', type: 'server_error', param: null, code: null } }] };
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const events = await sseEvents(answer.text);
    expect(events.map((e) => e.event)).to.deep.equal(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(events[4].data.type).to.equal('error');
    expect(events[4].data.error.type).to.equal('api_error');
    expect(events[4].data.error.message).to.include('The engine ran out of memory.');
  });

  it('answers a tool call the token limit cut short with stop_reason max_tokens, not an upstream error', async () => {
    upstream.script = {
      kind: 'json',
      body: {
        ...chatCompletion('', { prompt_tokens: 50, completion_tokens: 8, total_tokens: 58 }),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Par' } }] },
            logprobs: null,
            finish_reason: 'length',
          },
        ],
      },
    };
    const answer = await client.messages.create({ model: 'gpt-test', max_tokens: 8, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(answer.stop_reason).to.equal('max_tokens');
    // the incomplete call stays last, as Anthropic answers it, so the client knows to ask again with more tokens
    expect(answer.content.map((b) => (b.type === 'tool_use' ? [b.type, b.id, b.name] : [b.type]))).to.deep.equal([['tool_use', 'call_1', 'get_weather']]);
    expect(answer.usage).to.deep.include({ input_tokens: 50, output_tokens: 8 });
  });

  it('answers a forced tool call with stop_reason tool_use, though OpenAI finishes it with "stop", JSON and streamed', async () => {
    // OpenAI ends a call forced by a named tool_choice with finish_reason "stop", not "tool_calls"
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    upstream.script = {
      kind: 'json',
      body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, logprobs: null, finish_reason: 'stop' }] },
    };
    const request = { model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], tool_choice: { type: 'tool' as const, name: 'get_weather' }, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
    const answer = await client.messages.create(request);
    expect(upstream.last.body.tool_choice).to.deep.equal({ type: 'function', function: { name: 'get_weather' } });
    expect(answer.stop_reason).to.equal('tool_use');

    upstream.script = {
      kind: 'sse',
      events: readFixture<{ data: any }[]>('messages', 'tool-calls.chat-stream.json')
        .slice(0, -1)
        .map((f) => (f.data.choices?.[0]?.finish_reason === 'tool_calls' ? { ...f.data, choices: [{ ...f.data.choices[0], finish_reason: 'stop' }] } : f.data)),
    };
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content.map((b) => b.type)).to.deep.equal(['text', 'tool_use', 'tool_use']);
    expect(streamed.stop_reason).to.equal('tool_use');
  });

  it('gives every tool_use block an id when the upstream sent none or an empty one (llama.cpp), JSON and streamed, so each call can be answered', async () => {
    // llama.cpp's server answered calls without an id; other servers stream id: "" for every call
    const call = (id: string | undefined, city: string) => ({ ...(id === undefined ? {} : { id }), type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } });
    upstream.script = {
      kind: 'json',
      body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call(undefined, 'Paris'), call('', 'Rome')] }, logprobs: null, finish_reason: 'tool_calls' }] },
    };
    const request = { model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris and Rome?' }] };
    const answer = await client.messages.create(request);
    const ids = answer.content.map((b) => (b.type === 'tool_use' ? b.id : undefined));
    expect(ids).to.have.length(2);
    for (const id of ids) expect(id).to.be.a('string').and.not.equal('');
    expect(new Set(ids).size).to.equal(2);

    const base = { id: 'chatcmpl-l1', object: 'chat.completion.chunk', created: 1700000000, model: 'llama' };
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...call('', 'Paris') }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 1, ...call('', 'Rome') }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ],
    };
    const streamed = await client.messages.stream(request).finalMessage();
    const streamedIds = streamed.content.map((b) => (b.type === 'tool_use' ? b.id : undefined));
    expect(streamed.content.map((b) => (b.type === 'tool_use' ? b.input : undefined))).to.deep.equal([{ city: 'Paris' }, { city: 'Rome' }]);
    for (const id of streamedIds) expect(id).to.be.a('string').and.not.equal('');
    expect(new Set(streamedIds).size).to.equal(2);

    // the ids the client answers with reach the upstream on both sides of the round trip
    upstream.script = { kind: 'json', body: chatCompletion('18C in Paris, 20C in Rome.') };
    await client.messages.create({
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: answer.content },
        { role: 'user', content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id!, content: 'sunny' })) },
      ],
    });
    const sent = upstream.last.body.messages;
    expect(sent[1].tool_calls.map((c: { id: string }) => c.id)).to.deep.equal(ids);
    expect(sent.slice(2).map((m: { tool_call_id: string }) => m.tool_call_id)).to.deep.equal(ids);
  });

  it('answers stop_reason tool_use for a streamed tool call whose upstream ended with [DONE] and no finish_reason, as the JSON answer does', async () => {
    const base = { id: 'chatcmpl-n1', object: 'chat.completion.chunk', created: 1700000000, model: 'local' };
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, finish_reason: null }] },
        { ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
      ],
    };
    const request = { model: 'gpt-test', max_tokens: 256, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content).to.deep.equal([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(streamed.stop_reason).to.equal('tool_use');
  });

  describe('errors in the Anthropic shape', () => {
    it('refuses count_tokens for a model whose provider cannot count them', async () => {
      const answer = await rawPost(`${gw.url}/native/v1/messages/count_tokens`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.text)).to.deep.equal({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'The model `gpt-test` does not support the messages.count_tokens API.' },
      });
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a tool_choice of type tool without a name with a 400 naming tool_choice.name, before calling upstream', async () => {
      for (const [tool_choice, message] of [
        [{ type: 'tool' }, 'tool_choice.name: Field required'],
        [{ type: 'tool', name: 5 }, 'tool_choice.name: expected a string'],
      ] as const) {
        const err = (await client.messages
          .create({ model: 'gpt-test', max_tokens: 10, tools: [WEATHER_TOOL], tool_choice: tool_choice as never, messages: [{ role: 'user', content: 'hi' }] })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a text block without its text with a 400 naming the message content, before calling upstream', async () => {
      // the content union's own hint names the field, as for any block of the wrong shape
      const message = 'messages.0.content: Input should be a valid string or a list of content blocks';
      for (const block of [{ type: 'text' }, { type: 'text', text: 5 }]) {
        const err = (await client.messages
          .create({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: [block as never] }] })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a tool_result without the id of the call it answers with a 400 naming the message content, before calling upstream', async () => {
      const message = 'messages.2.content: Input should be a valid string or a list of content blocks';
      for (const result of [{ type: 'tool_result', content: 'sunny' }, { type: 'tool_result', tool_use_id: '', content: 'sunny' }]) {
        const err = (await client.messages
          .create({
            model: 'gpt-test',
            max_tokens: 10,
            tools: [WEATHER_TOOL],
            messages: [
              { role: 'user', content: 'Weather in Paris?' },
              { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
              { role: 'user', content: [result as never] },
            ],
          })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a tool_use block without its id or name, or with input that is not an object, with a 400 naming the message content, before calling upstream', async () => {
      const message = 'messages.1.content: Input should be a valid string or a list of content blocks';
      // each went upstream as a tool call without id or name, or with arguments that were a JSON string ("\"{...}\"")
      for (const use of [
        { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: '', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_1', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: '{"city":"Paris"}' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: ['Paris'] },
      ]) {
        const err = (await client.messages
          .create({
            model: 'gpt-test',
            max_tokens: 10,
            tools: [WEATHER_TOOL],
            messages: [
              { role: 'user', content: 'Weather in Paris?' },
              { role: 'assistant', content: [use as never] },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
            ],
          })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err, JSON.stringify(use)).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
      // a null input (a call whose arguments an upstream answered "null", sent back) still goes as no arguments
      await client.messages.create({
        model: 'gpt-test',
        max_tokens: 10,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: null }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
        ],
      });
      expect(upstream.last.body.messages[1].tool_calls).to.deep.equal([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }]);
    });

    it('refuses a text block of a tool_result without its text as a string with a 400 naming it, before calling upstream', async () => {
      const message = 'messages.2.content.0.content.1.text: Input should be a valid string';
      // an object with its own toString ended the request in a 500; a number went upstream as its digits
      for (const text of [JSON.parse('{"toString":1}'), 5, undefined]) {
        const err = (await client.messages
          .create({
            model: 'gpt-test',
            max_tokens: 10,
            tools: [WEATHER_TOOL],
            messages: [
              { role: 'user', content: 'Weather in Paris?' },
              { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'sunny' }, { type: 'text', text } as never] }] },
            ],
          })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a tool whose input_schema is not an object with a 400 naming the tool, before calling upstream', async () => {
      const message = 'tools.0: Input should be a tool with a name (its input_schema an object), or a typed tool such as mcp_toolset';
      // each went upstream as the function's parameters, refused there in the upstream's words
      for (const input_schema of ['{"type":"object"}', [], 5]) {
        const err = (await client.messages
          .create({ model: 'gpt-test', max_tokens: 10, tools: [{ name: 'get_weather', input_schema: input_schema as never }], messages: [{ role: 'user', content: 'hi' }] })
          .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
        expect(err, JSON.stringify(input_schema)).to.be.instanceOf(Anthropic.BadRequestError);
        expect(err.error).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message } });
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a server tool it cannot run on this model, before calling upstream', async () => {
      const answer = await rawPost(
        `${gw.url}/native/v1/messages`,
        { 'x-api-key': CLIENT_KEY },
        { model: 'gpt-test', max_tokens: 10, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'hi' }] },
      );
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.text)).to.deep.equal({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'tools.0: server tools ("web_search_20250305") are supported only for Anthropic models' },
      });
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses MCP connector servers (mcp_servers) it cannot reach from this model, before calling upstream, rather than answer without their tools', async () => {
      const answer = await rawPost(
        `${gw.url}/native/v1/messages`,
        { 'x-api-key': CLIENT_KEY, 'anthropic-beta': 'mcp-client-2025-04-04' },
        { model: 'gpt-test', max_tokens: 10, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/mcp', name: 'tickets' }], messages: [{ role: 'user', content: 'List my open tickets.' }] },
      );
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.text)).to.deep.equal({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'mcp_servers: MCP connector servers are supported only for Anthropic models' },
      });
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses a tool_result whose content is neither text nor a list of blocks, before calling upstream', async () => {
      const toolTurns = (content: unknown) => [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content }] },
      ];
      for (const [content, param] of [[5, 'content'], [{ text: 'r' }, 'content'], [true, 'content'], [[null], 'content.0'], [['text'], 'content.0']] as const) {
        const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, messages: toolTurns(content) });
        expect(answer.status, JSON.stringify(content)).to.equal(400);
        const error = JSON.parse(answer.text);
        expect(error.type).to.equal('error');
        expect(error.error.type).to.equal('invalid_request_error');
        expect(error.error.message).to.match(new RegExp(`^messages\\.2\\.content\\.0\\.${param.replace('.', '\\.')}: Input should be`));
      }
      expect(upstream.requests).to.have.length(0);
    });

    it('answers a chat upstream whose answer is JSON of the wrong shape with 502 upstream_bad_response, JSON and streamed', async () => {
      for (const body of [null, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: 5 }, finish_reason: 'tool_calls' }] }]) {
        upstream.script = { kind: 'json', body };
        const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
        expect(answer.status, answer.text).to.equal(502);
        expect(JSON.parse(answer.text)).to.deep.equal({ type: 'error', error: { type: 'api_error', message: 'The upstream sent a response the gateway could not read.' } });
        // asked to stream, answered with that JSON: the same error, before any event
        const asStream = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
        expect(asStream.status, asStream.text).to.equal(502);
        expect(JSON.parse(asStream.text)).to.deep.equal({ type: 'error', error: { type: 'api_error', message: 'The upstream sent a response the gateway could not read.' } });
      }
      upstream.script = { kind: 'sse', events: [{ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }, 'data: null\n\n'] };
      const streamed = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(streamed.status).to.equal(200);
      expect(streamed.text).to.include('"text":"Hel"');
      expect(streamed.text).to.match(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream sent a response the gateway could not read\."\}\}/);
    });

    it('answers a prompt over the model\u2019s context window as Anthropic words it, so Claude Code compacts its history, JSON and streamed', async () => {
      const cases: [upstreamMessage: string, clientMessage: string][] = [
        [
          'This model\'s maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.',
          'prompt is too long: 130532 tokens > 128000 maximum',
        ],
        [
          'This model\'s maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens (129000 in the messages, 1532 in the functions). Please reduce the length of the messages or functions.',
          'prompt is too long: 130532 tokens > 128000 maximum',
        ],
        [
          'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300123 tokens. Please reduce the length of the messages.',
          'prompt is too long: 300123 tokens > 272000 maximum',
        ],
        // the prompt fits, but not with the room max_tokens asks for: Anthropic's wording for that, on which Claude Code lowers max_tokens
        [
          'This model\'s maximum context length is 8192 tokens. However, you requested 9024 tokens (5000 in the messages, 4024 in the completion). Please reduce the length of the messages or completion.',
          'input length and `max_tokens` exceed context limit: 5000 + 4024 > 8192, decrease input length or `max_tokens` and try again',
        ],
        // no numbers (Groq): still the words Claude Code acts on, with the upstream's own
        ['Please reduce the length of the messages or completion.', 'prompt is too long for the model\'s context window: Please reduce the length of the messages or completion.'],
      ];
      for (const [upstreamMessage, clientMessage] of cases) {
        upstream.script = { kind: 'json', status: 400, body: { error: { message: upstreamMessage, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } };
        for (const stream of [false, true]) {
          try {
            await client.messages.create({ model: 'gpt-test', max_tokens: 1024, stream, messages: [{ role: 'user', content: 'a very long history' }] });
            expect.fail('expected a context length error');
          } catch (err) {
            expect(err, upstreamMessage).to.be.instanceOf(Anthropic.BadRequestError);
            expect((err as InstanceType<typeof Anthropic.APIError>).error, `${upstreamMessage} stream=${stream}`).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: clientMessage } });
          }
        }
      }
    });

    it('answers a vLLM server\u2019s context-window error, which carries no OpenAI code, as Anthropic words it', async () => {
      // vLLM: OpenAI's wording, its own type, and the HTTP status as the code
      const cases: [upstreamMessage: string, clientMessage: string][] = [
        ['This model\'s maximum context length is 32768 tokens. However, your request has 40112 input tokens. Please reduce the length of the input messages. None', 'prompt is too long: 40112 tokens > 32768 maximum'],
        [
          '\'max_tokens\' or \'max_completion_tokens\' is too large: 8000. This model\'s maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None',
          'input length and `max_tokens` exceed context limit: 2778 + 8000 > 4096, decrease input length or `max_tokens` and try again',
        ],
      ];
      for (const [upstreamMessage, clientMessage] of cases) {
        upstream.script = { kind: 'json', status: 400, body: { error: { message: upstreamMessage, type: 'BadRequestError', param: null, code: 400 } } };
        try {
          await client.messages.create({ model: 'gpt-test', max_tokens: 8000, messages: [{ role: 'user', content: 'a very long history' }] });
          expect.fail('expected a context length error');
        } catch (err) {
          expect(err, upstreamMessage).to.be.instanceOf(Anthropic.BadRequestError);
          expect((err as InstanceType<typeof Anthropic.APIError>).error, upstreamMessage).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: clientMessage } });
        }
      }
    });

    it('turns an upstream OpenAI 429 into a rate_limit_error', async () => {
      upstream.script = { kind: 'json', status: 429, body: { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } } };
      try {
        await client.messages.create({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
        expect.fail('expected a rate limit error');
      } catch (err) {
        expect(err).to.be.instanceOf(Anthropic.RateLimitError);
        expect(((err as InstanceType<typeof Anthropic.APIError>).error as any).error.type).to.equal('rate_limit_error');
      }
    });

    it('ends a stream the upstream cuts with an error event instead of message_stop', async () => {
      upstream.script = { kind: 'sse', events: chatChunks(['partial']), cutAfter: 2 };
      const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'gpt-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const events = await sseEvents(answer.text);
      expect(events.map((e) => e.event)).to.deep.equal(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
      expect(events[4].data.type).to.equal('error');
      expect(events[4].data.error.type).to.equal('api_error');
    });
  });
});
