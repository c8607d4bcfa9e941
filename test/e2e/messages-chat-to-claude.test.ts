import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeAnthropicUpstream, textEvents } from '../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawPost } from './messages-support';

const PROVIDER_KEY = 'sk-ant-provider-CANARY-a1b2';
const CLIENT_KEY = 'sk-client-CANARY-c3d4';
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
const NOW_MS = 1700000000_000;

describe('chat completions to an Anthropic model (openai SDK, fake Anthropic upstream)', () => {
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'app' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withProvider({ id: 'claude-bad-key', type: 'anthropic', baseUrl: upstream.url, apiKey: 'sk-ant-revoked' })
      .withModel('claude-sonnet', { provider: 'claude', model: UPSTREAM_MODEL, id: 'claude/sonnet', price: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 } })
      // priced from the bundled table
      .withModel('claude-listed', { provider: 'claude', model: UPSTREAM_MODEL, id: 'claude/listed' })
      .withModel('claude-misconfigured', { model: UPSTREAM_MODEL })
      .withModel('claude-opus-new', { provider: 'claude', model: 'claude-opus-4-7' })
      .with({
        // error mapping is under test here, not the router's retries
        routing: { retries: 0 },
      })
      .start({ clock: { now: () => NOW_MS } });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.reply({ json: readFixture('anthropic', 'tool-use.upstream-response.json') });
  });

  it('translates the request (system lifted, max_tokens default, tools) and the answer (tool calls, usage)', async () => {
    const request = readFixture('anthropic', 'tool-round-trip.chat-request.json');
    const { data, response } = await client.chat.completions.create({ ...request, model: 'claude-sonnet' }).withResponse();
    expect(upstream.last.path).to.equal('/v1/messages');
    expect(upstream.last.headers['x-api-key']).to.equal(PROVIDER_KEY);
    expect(upstream.last.headers['anthropic-version']).to.equal('2023-06-01');
    expect(JSON.stringify(upstream.last.headers)).to.not.include(CLIENT_KEY);
    expect(upstream.last.body).to.deep.equal(readFixture('anthropic', 'tool-round-trip.upstream-request.json'));
    expect(data).to.deep.equal(readFixture('anthropic', 'tool-use.chat-response.json'));
    expect(response.headers.get('x-gateway-model-id')).to.equal('claude/sonnet');
  });

  it('sends a request that is only a system message (OpenAI answers one) as the user turn, since Claude refuses a request without messages', async () => {
    const data = await client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'system', content: 'Write a haiku about the sea.' }] });
    expect(upstream.last.body.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Write a haiku about the sea.' }] }]);
    expect(upstream.last.body).to.not.have.property('system');
    expect(data.choices[0].message).to.have.property('role', 'assistant');
  });

  it('lifts system messages and prices cache reads and writes', async () => {
    upstream.reply({ json: readFixture('anthropic', 'cached-usage.upstream-response.json') });
    const request = readFixture('anthropic', 'system-blocks-cache.chat-request.json');
    const { data, response } = await client.chat.completions.create({ ...request, model: 'claude-sonnet' }).withResponse();
    expect(upstream.last.body).to.deep.equal(readFixture('anthropic', 'system-blocks-cache.upstream-request.json'));
    expect(data).to.deep.equal(readFixture('anthropic', 'cached-usage.chat-response.json'));
    // 21 input x $3 + 1200 cache reads x $0.30 + 300 cache writes x $3.75 + 512 output x $15, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.009228');
  });

  it('prices 1-hour cache writes at their own price (2x input), not the 5-minute one, JSON and streamed', async () => {
    // Anthropic splits the writes of `cache_control: { ttl: "1h" }` by TTL in usage.cache_creation
    const usage = { input_tokens: 100, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 }, output_tokens: 50 };
    const message = { id: 'msg_1h', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, stop_sequence: null };
    upstream.reply({ json: { ...message, content: [{ type: 'text', text: 'Noted.' }], stop_reason: 'end_turn', usage } });
    const { data, response } = await client.chat.completions.create({ model: 'claude-listed', messages: [{ role: 'user', content: 'Summarise chapter 1.' }] }).withResponse();
    expect(data.usage).to.include({ prompt_tokens: 3100, completion_tokens: 50 });
    // 100 input x $3 + 1000 5-minute writes x $3.75 + 2000 1-hour writes x $6 + 50 output x $15, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.0168');

    upstream.reply({
      events: [
        { event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Noted.' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 50 } } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    });
    const streamed = await rawPost(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${CLIENT_KEY}` }, { model: 'claude-listed', stream: true, messages: [{ role: 'user', content: 'Summarise chapter 1.' }] });
    expect(streamed.status).to.equal(200);
    expect(streamed.trailers['x-gateway-response-cost']).to.equal('0.0168');
  });

  it('streams text back as chat.completion.chunk, with usage including cached tokens when asked', async () => {
    upstream.reply({ events: readFixture<{ event: string; data: object }[]>('anthropic', 'tool-use.upstream-stream.json') });
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }],
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(upstream.last.body).to.deep.equal({ model: UPSTREAM_MODEL, max_tokens: 4096, messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }], stream: true });
    expect(chunks).to.deep.equal(readFixture<{ data: object }[]>('anthropic', 'tool-use.chat-stream.json').slice(0, -1).map((f) => f.data));
  });

  it('leaves the usage chunk out when the client did not ask for it', async () => {
    upstream.reply({ events: textEvents('msg_1', UPSTREAM_MODEL, ['Hel', 'lo']) });
    const stream = await client.chat.completions.create({ model: 'claude-sonnet', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).to.deep.equal(['', 'Hel', 'lo', null]);
    expect(chunks.every((c) => c.choices.length === 1)).to.equal(true);
  });

  it('lets the openai SDK assemble a streamed tool call into its arguments', async () => {
    upstream.reply({ events: readFixture<{ event: string; data: object }[]>('anthropic', 'tool-use.upstream-stream.json') });
    const runner = client.chat.completions.stream({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] });
    const completion = await runner.finalChatCompletion();
    const message = completion.choices[0].message;
    expect(message.content).to.equal('Checking.');
    expect(message.tool_calls?.map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) } : c))).to.deep.equal([
      { id: 'toolu_01', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'toolu_02', name: 'get_time', args: {} },
    ]);
    expect(completion.choices[0].finish_reason).to.equal('tool_calls');
  });

  it('streams a tool call without input as arguments "{}", as the JSON answer has them', async () => {
    // Anthropic streams a tool_use block with an empty input as one empty input_json_delta
    const events = readFixture<{ event: string; data: any }[]>('anthropic', 'tool-use.upstream-stream.json').map((e) =>
      e.data.type === 'content_block_delta' && e.data.index === 3 ? { ...e, data: { ...e.data, delta: { type: 'input_json_delta', partial_json: '' } } } : e,
    );
    upstream.reply({ events });
    const completion = await client.chat.completions.stream({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] }).finalChatCompletion();
    const calls = completion.choices[0].message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === 'function' ? [c.function.name, c.function.arguments] : c))).to.deep.equal([
      ['get_weather', '{"city": "Paris"}'],
      ['get_time', '{}'],
    ]);
  });

  it('fits reasoning_effort\u2019s thinking budget under the client\u2019s own token cap', async () => {
    upstream.reply({ json: readFixture('anthropic', 'text.upstream-response.json') });
    const data = await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'high', max_completion_tokens: 6000, messages: [{ role: 'user', content: '17 * 23?' }] });
    expect(data.choices[0].finish_reason).to.equal('stop');
    // OpenAI counts reasoning inside max_completion_tokens; Anthropic refuses a budget not below max_tokens
    // ("`max_tokens` must be greater than `thinking.budget_tokens`")
    expect(upstream.last.body).to.deep.include({ max_tokens: 6000, thinking: { type: 'enabled', budget_tokens: 5999 } });

    // a cap below Anthropic's smallest budget leaves no room to think: answered without thinking
    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'low', max_tokens: 1000, messages: [{ role: 'user', content: '17 * 23?' }] });
    expect(upstream.last.body.max_tokens).to.equal(1000);
    expect(upstream.last.body).to.not.have.property('thinking');
  });

  it('thinks for reasoning_effort xhigh and max, with budgets above high\u2019s, instead of not at all', async () => {
    upstream.reply({ json: readFixture('anthropic', 'text.upstream-response.json') });
    const budgets: number[] = [];
    for (const reasoning_effort of ['high', 'xhigh', 'max'] as const) {
      await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort, messages: [{ role: 'user', content: '17 * 23?' }] });
      expect(upstream.last.body.thinking, reasoning_effort).to.include({ type: 'enabled' });
      // the default cap is the answer's 4096 tokens plus the budget, within the 32,000 output tokens of Claude Opus 4
      expect(upstream.last.body.max_tokens).to.equal(4096 + upstream.last.body.thinking.budget_tokens).and.to.be.at.most(32000);
      budgets.push(upstream.last.body.thinking.budget_tokens);
    }
    expect(budgets[1]).to.be.above(budgets[0]);
    expect(budgets[2]).to.be.above(budgets[1]);
  });

  it('turns reasoning_effort into adaptive thinking with that effort for Claude models that refuse a thinking budget (Opus 4.7 and later)', async () => {
    upstream.reply((req) => {
      // what api.anthropic.com answers for these models
      if (req.body.model === 'claude-opus-4-7' && req.body.thinking?.type === 'enabled') {
        return { error: { status: 400, type: 'invalid_request_error', message: '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.' } };
      }
      return {
        json: {
          id: 'msg_adaptive',
          type: 'message',
          role: 'assistant',
          model: req.body.model,
          content: [
            { type: 'thinking', thinking: req.body.thinking?.display === 'summarized' ? '17 * 23 = 391.' : '', signature: 'sig-1' },
            { type: 'text', text: '391' },
          ],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 30 },
        },
      };
    });
    const data = await client.chat.completions.create({ model: 'claude-opus-new', reasoning_effort: 'high', messages: [{ role: 'user', content: '17 * 23?' }] });
    expect(data.choices[0].message.content).to.equal('391');
    // those models leave the thinking text out unless asked; the client asked to see it
    expect((data.choices[0].message as any).reasoning_content).to.equal('17 * 23 = 391.');
    expect(upstream.last.body).to.deep.include({ thinking: { type: 'adaptive', display: 'summarized' }, output_config: { effort: 'high' } });
    expect(upstream.last.body.max_tokens).to.be.above(4096);

    // Anthropic has no "minimal" effort; a schema format travels beside the effort
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false };
    await client.chat.completions.create({
      model: 'claude-opus-new',
      reasoning_effort: 'minimal',
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema } },
      messages: [{ role: 'user', content: '17 * 23?' }],
    });
    expect(upstream.last.body.output_config).to.deep.equal({ effort: 'low', format: { type: 'json_schema', schema } });
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'adaptive', display: 'summarized' });

    // models that still take a budget keep getting one
    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'high', messages: [{ role: 'user', content: '17 * 23?' }] });
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 16384 });
  });

  it('raises the default max_tokens by the budget of a thinking setting the client sends itself, as for reasoning_effort', async () => {
    upstream.reply((req) => {
      // what api.anthropic.com checks
      if (req.body.thinking?.budget_tokens >= req.body.max_tokens) {
        return { error: { status: 400, type: 'invalid_request_error', message: '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size' } };
      }
      return { json: readFixture('anthropic', 'text.upstream-response.json') };
    });
    const data = await client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'user', content: '17 * 23?' }], thinking: { type: 'enabled', budget_tokens: 8000 } } as any);
    expect(data.choices[0].message.content).to.equal('Onze, par exemple.');
    expect(upstream.last.body).to.deep.include({ max_tokens: 4096 + 8000, thinking: { type: 'enabled', budget_tokens: 8000 } });
  });

  it('lets the openai SDK pass a streamed thinking turn back with its signed thinking block, as tool runners do', async () => {
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } }));
    const question = { role: 'user' as const, content: 'Weather in Paris, and the time?' };
    upstream.reply({ events: readFixture<{ event: string; data: object }[]>('anthropic', 'tool-use.upstream-stream.json') });
    const completion = await client.chat.completions.stream({ model: 'claude-sonnet', reasoning_effort: 'low', tools, messages: [question] }).finalChatCompletion();
    // the SDK's stream helpers keep the last delta of a field they do not know, as runTools does
    const assistant = completion.choices[0].message;

    upstream.reply({ json: readFixture('anthropic', 'text.upstream-response.json') });
    await client.chat.completions.create({
      model: 'claude-sonnet',
      reasoning_effort: 'low',
      tools,
      messages: [question, assistant, { role: 'tool', tool_call_id: 'toolu_01', content: '18C' }, { role: 'tool', tool_call_id: 'toolu_02', content: 'noon' }],
    });
    // Anthropic checks the signature against the block's text: the block must come back whole
    expect(upstream.last.body.messages[1].content[0]).to.deep.equal({ type: 'thinking', thinking: 'Two lookups needed.', signature: 'EqQBCgIYAhIM' });
  });

  it('sends an image with an empty caption, an empty system part and an empty tool result part without the empty text Anthropic refuses', async () => {
    upstream.reply({ json: readFixture('anthropic', 'text.upstream-response.json') });
    const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [
        { role: 'system', content: [{ type: 'text', text: '' }, { type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: [{ type: 'text', text: '' }, image] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'snapshot', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: [{ type: 'text', text: '' }, { type: 'text', text: 'done' }] },
      ],
    });
    // "messages: text content blocks must be non-empty" (and "system: ..." for the system prompt)
    expect(upstream.last.body.system).to.equal('Be brief.');
    expect(upstream.last.body.messages[0].content).to.deep.equal([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }]);
    expect(upstream.last.body.messages[2].content).to.deep.equal([{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'done' }] }]);
  });

  it('continues a conversation after Claude answered a tool result without a word, as the openai SDK passes that turn back', async () => {
    const usage = { input_tokens: 20, output_tokens: 1 };
    upstream.reply((req) => {
      const messages = req.body.messages as any[];
      // what api.anthropic.com checks
      const empty = messages.findIndex((m, i) => i < messages.length - 1 && (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)));
      if (empty >= 0) return { error: { status: 400, type: 'invalid_request_error', message: `messages.${empty}: all messages must have non-empty content except for the optional final assistant message` } };
      // Claude sometimes ends its turn after a tool result without a word
      const content = messages.length === 3 ? [] : [{ type: 'text', text: 'It is 18C in Paris.' }];
      return { json: { id: 'msg_e', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content, stop_reason: 'end_turn', stop_sequence: null, usage } };
    });
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_01', content: '18C' },
    ];
    const silent = await client.chat.completions.create({ model: 'claude-sonnet', messages: history });
    expect(silent.choices[0].message.content).to.equal('');
    const next = await client.chat.completions.create({ model: 'claude-sonnet', messages: [...history, silent.choices[0].message, { role: 'user', content: 'So?' }] });
    expect(next.choices[0].message.content).to.equal('It is 18C in Paris.');
  });

  it('continues a tool round with reasoning_effort set when the client kept no thinking blocks, leaving thinking off as Anthropic requires', async () => {
    upstream.reply((req) => {
      const messages = req.body.messages as any[];
      const lastAssistant = messages.map((m, i) => [m, i] as const).filter(([m]) => m.role === 'assistant').at(-1);
      const first = lastAssistant && Array.isArray(lastAssistant[0].content) ? lastAssistant[0].content[0] : undefined;
      // what api.anthropic.com checks
      if (req.body.thinking && first && first.type !== 'thinking' && first.type !== 'redacted_thinking') {
        const message = `messages.${lastAssistant![1]}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`;
        return { error: { status: 400, type: 'invalid_request_error', message } };
      }
      return { json: readFixture('anthropic', 'text.upstream-response.json') };
    });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
    // a client that keeps only the standard fields of the assistant message (LangChain's ChatOpenAI does)
    const data = await client.chat.completions.create({
      model: 'claude-sonnet',
      reasoning_effort: 'low',
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: '18C' },
      ],
    });
    expect(data.choices[0].message.content).to.equal('Onze, par exemple.');
    expect(upstream.last.body).to.not.have.property('thinking');

    // a new question after the tool round thinks again
    await client.chat.completions.create({
      model: 'claude-sonnet',
      reasoning_effort: 'low',
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: '18C' },
        { role: 'assistant', content: 'It is 18C.' },
        { role: 'user', content: 'And in Rome?' },
      ],
    });
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
  });

  it('sends temperature and top_p beside each other only when neither is at its default, which recent Claude models refuse', async () => {
    upstream.reply((req) => {
      // what api.anthropic.com answers for Claude Sonnet 4.5 and later
      if (req.body.temperature !== undefined && req.body.top_p !== undefined) {
        return { error: { status: 400, type: 'invalid_request_error', message: '`temperature` and `top_p` cannot both be specified for this model. Please use only one.' } };
      }
      return { json: readFixture('anthropic', 'text.upstream-response.json') };
    });
    const question = [{ role: 'user' as const, content: '17 * 23?' }];
    // chat UIs send OpenAI's defaults beside the value they mean: top_p 1 (or temperature 1) changes nothing
    await client.chat.completions.create({ model: 'claude-sonnet', temperature: 0.2, top_p: 1, messages: question });
    expect(upstream.last.body).to.include({ temperature: 0.2 }).and.not.have.property('top_p');
    await client.chat.completions.create({ model: 'claude-sonnet', temperature: 1, top_p: 0.9, messages: question });
    expect(upstream.last.body).to.include({ top_p: 0.9 }).and.not.have.property('temperature');
    await client.chat.completions.create({ model: 'claude-sonnet', temperature: 0.5, messages: question });
    expect(upstream.last.body).to.include({ temperature: 0.5 });
  });

  it('answers reasoning_effort beside sampling settings that Anthropic refuses while thinking, leaving those settings out', async () => {
    upstream.reply((req) => {
      // what api.anthropic.com answers while thinking is on
      if (req.body.thinking?.type === 'enabled') {
        if (req.body.temperature !== undefined && req.body.temperature !== 1) {
          return { error: { status: 400, type: 'invalid_request_error', message: '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility' } };
        }
        if (req.body.top_k !== undefined) return { error: { status: 400, type: 'invalid_request_error', message: '`top_k` is not supported when thinking is enabled.' } };
        if (req.body.top_p !== undefined && req.body.top_p < 0.95) {
          return { error: { status: 400, type: 'invalid_request_error', message: '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.' } };
        }
      }
      return { json: readFixture('anthropic', 'text.upstream-response.json') };
    });
    const question = [{ role: 'user' as const, content: '17 * 23?' }];
    const data = await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'low', temperature: 0.2, messages: question });
    expect(data.choices[0].message.content).to.equal('Onze, par exemple.');
    expect(upstream.last.body.thinking).to.include({ type: 'enabled' });
    expect(upstream.last.body).to.not.have.property('temperature');

    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'medium', top_p: 0.5, top_k: 40, messages: question } as any);
    expect(upstream.last.body.thinking).to.include({ type: 'enabled' });
    expect(upstream.last.body).to.not.have.any.keys('top_p', 'top_k');

    // what thinking allows goes on as sent
    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'low', top_p: 0.97, messages: question });
    expect(upstream.last.body).to.include({ top_p: 0.97 });
    // without thinking (a cap too small for a budget), the sampling settings stay
    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'low', max_tokens: 1000, temperature: 0.2, messages: question });
    expect(upstream.last.body).to.include({ temperature: 0.2 }).and.not.have.property('thinking');
  });

  it('sends an image under the type its bytes have, as Anthropic checks, when the data URL names another (image/jpg, a JPEG named PNG)', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64');
    upstream.reply((req) => {
      const blocks = (req.body.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      const images = [...blocks, ...blocks.flatMap((b) => (Array.isArray(b.content) ? b.content : []))].filter((b) => b.type === 'image');
      // what api.anthropic.com answers
      const wrong = images.find((b) => b.source.data === jpeg && b.source.media_type !== 'image/jpeg');
      if (wrong) return { error: { status: 400, type: 'invalid_request_error', message: `messages.0.content.0.image.source.base64: The image was specified using the ${wrong.source.media_type} media type, but the image appears to be a image/jpeg image` } };
      return { json: readFixture('anthropic', 'text.upstream-response.json') };
    });
    await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${jpeg}` } }, { type: 'image_url', image_url: { url: `data:image/jpg;base64,${jpeg}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'snapshot', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${jpeg}` } }] as any },
      ],
    });
    const [question, , results] = upstream.last.body.messages;
    expect(question.content.map((b: any) => b.source.media_type)).to.deep.equal(['image/jpeg', 'image/jpeg']);
    expect(results.content[0].content[0].source).to.deep.equal({ type: 'base64', media_type: 'image/jpeg', data: jpeg });
  });

  it('sends tool call ids other models made (Kimi, Gemini with a thought signature) in the form Anthropic takes', async () => {
    const ids = ['functions.get_weather:0', 'call_r1_0__thought__CiQB+x/Yz=='];
    await client.chat.completions.create({
      model: 'claude-sonnet',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } })) },
        ...ids.map((id) => ({ role: 'tool' as const, tool_call_id: id, content: '18C' })),
      ],
    });
    const [, assistant, results] = upstream.last.body.messages;
    const uses = assistant.content.map((b: any) => b.id);
    // Anthropic refuses any other id: "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
    for (const id of uses) expect(id).to.match(/^[a-zA-Z0-9_-]+$/);
    expect(new Set(uses).size).to.equal(2);
    expect(results.content.map((b: any) => b.tool_use_id)).to.deep.equal(uses);
  });

  it('answers a forced tool call with reasoning_effort set, leaving thinking off as Anthropic requires', async () => {
    upstream.reply({ json: readFixture('anthropic', 'tool-only.upstream-response.json') });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
    for (const tool_choice of ['required', { type: 'function', function: { name: 'get_weather' } }] as const) {
      await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'medium', tools, tool_choice, messages: [{ role: 'user', content: 'Weather?' }] });
      // "Thinking may not be enabled when tool_choice forces tool use."
      expect(upstream.last.body).to.not.have.property('thinking');
      expect(upstream.last.body.max_tokens).to.equal(4096);
    }
    await client.chat.completions.create({ model: 'claude-sonnet', reasoning_effort: 'medium', tools, tool_choice: 'auto', messages: [{ role: 'user', content: 'Weather?' }] });
    expect(upstream.last.body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 4096 });
  });

  describe('errors in the OpenAI shape', () => {
    async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
      try {
        await promise;
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.APIError);
        return err as InstanceType<typeof OpenAI.APIError>;
      }
      throw new Error('expected an error');
    }

    it('an overloaded Anthropic upstream is a 503', async () => {
      upstream.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
      const err = await apiError(client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(503);
      expect(err.error).to.deep.equal({ message: 'The Anthropic upstream is overloaded: Overloaded', type: 'service_unavailable', param: null, code: 'upstream_overloaded' });
    });

    it('a prompt over the context window is a 400 context_length_exceeded, as OpenAI and the other providers name it', async () => {
      for (const message of ['prompt is too long: 208760 tokens > 200000 maximum', 'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again']) {
        upstream.reply({ error: { status: 400, type: 'invalid_request_error', message } });
        const err = await apiError(client.chat.completions.create({ model: 'claude-sonnet', messages: [{ role: 'user', content: 'a very long prompt' }] }));
        expect(err.status).to.equal(400);
        expect(err.error).to.deep.equal({ message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' });
      }
    });

    it('a provider key the upstream rejects is the gateway\u2019s 502, not the client\u2019s 401', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'claude-misconfigured', messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(502);
      expect((err.error as any).code).to.equal('upstream_auth_failed');
      expect(JSON.stringify(err.error)).to.not.include('sk-ant-revoked');
    });

    it('an Anthropic error event mid-stream reaches the SDK as an error', async () => {
      const start = textEvents('msg_e', UPSTREAM_MODEL, ['partial']).slice(0, 4);
      upstream.reply({ events: [...start, { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }] });
      const stream = await client.chat.completions.create({ model: 'claude-sonnet', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const seen: string[] = [];
      const err = await apiError(
        (async () => {
          for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
        })(),
      );
      expect(seen).to.deep.equal(['', 'partial']);
      expect(err.message).to.include('The Anthropic upstream is overloaded');
    });
  });
});
