import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeAnthropicUpstream, textEvents } from '../providers/anthropic/fake-anthropic-upstream';
import { readFixture } from '../support/fixtures';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawPost, sseEvents } from './messages-support';

const PROVIDER_KEY = 'sk-ant-provider-CANARY-5f2c';
const CLIENT_KEY = 'sk-client-CANARY-77ab';
const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';

describe('Messages endpoint, Anthropic model: pass-through (Anthropic SDK, fake Anthropic upstream)', () => {
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;
  let client: Anthropic;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'agent' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { model: UPSTREAM_MODEL, id: 'claude/sonnet', price: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 } })
      // priced from the bundled table
      .withModel('claude-listed', { model: UPSTREAM_MODEL, id: 'claude/listed' })
      .with({
        // error mapping is under test here, not the router's retries
        routing: { retries: 0 },
      })
      .start();
    client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.reply({ json: readFixture('anthropic', 'cached-usage.upstream-response.json') });
  });

  it('sends the body upstream unchanged except the model: system blocks, cache_control, thinking, metadata, top_k, unknown fields', async () => {
    const request = {
      model: 'claude-test',
      max_tokens: 512,
      system: [
        { type: 'text', text: 'You answer questions about the handbook.' },
        { type: 'text', text: '<handbook>...</handbook>', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise chapter 1.' }] }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      metadata: { user_id: 'user-42' },
      top_k: 10,
      stop_sequences: ['END'],
      tool_choice: { type: 'auto' },
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }],
      a_parameter_from_the_future: { enabled: true },
    };
    const { data, response } = await client.messages.create(request as any).withResponse();

    expect(upstream.last.path).to.equal('/v1/messages');
    expect(upstream.last.body).to.deep.equal({ ...request, model: UPSTREAM_MODEL });
    expect(upstream.last.headers['x-api-key']).to.equal(PROVIDER_KEY);
    // the SDK's own anthropic-version is passed on
    expect(upstream.last.headers['anthropic-version']).to.match(/^\d{4}-\d{2}-\d{2}$/);
    expect(upstream.last.headers.authorization).to.equal(undefined);
    expect(JSON.stringify(upstream.last.headers)).to.not.include(CLIENT_KEY);

    expect(data).to.deep.equal(readFixture('anthropic', 'cached-usage.upstream-response.json'));
    expect(response.headers.get('x-gateway-model-id')).to.equal('claude/sonnet');
    // 21 input x $3 + 1200 cache reads x $0.30 + 300 cache writes x $3.75 + 512 output x $15, per million
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.009228');
  });

  it('passes the client\u2019s anthropic-beta header on and accepts the key as x-api-key', async () => {
    const xApiKeyClient = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: null, defaultHeaders: { 'x-api-key': CLIENT_KEY }, maxRetries: 0 });
    await xApiKeyClient.messages.create(
      { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );
    expect(upstream.last.headers['anthropic-beta']).to.equal('context-1m-2025-08-07');
    expect(upstream.last.headers['x-api-key']).to.equal(PROVIDER_KEY);
  });

  it('passes tools that have no name of their own (the MCP connector\u2019s mcp_toolset) on, and still refuses a custom tool without one', async () => {
    const request = {
      model: 'claude-test',
      max_tokens: 256,
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/mcp', name: 'tickets', authorization_token: 'tok-1' }],
      tools: [{ type: 'mcp_toolset', mcp_server_name: 'tickets', default_config: { enabled: true } }, { name: 'lookup', input_schema: { type: 'object', properties: {} } }],
      messages: [{ role: 'user', content: 'List my open tickets.' }],
    };
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY, 'anthropic-beta': 'mcp-client-2025-11-20' }, request);
    expect(answer.status, answer.text).to.equal(200);
    expect(upstream.last.body).to.deep.equal({ ...request, model: UPSTREAM_MODEL });
    expect(upstream.last.headers['anthropic-beta']).to.equal('mcp-client-2025-11-20');

    upstream.requests.length = 0;
    const unnamed = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { ...request, tools: [{ input_schema: { type: 'object' } }] });
    expect(unnamed.status).to.equal(400);
    expect(JSON.parse(unnamed.text).error).to.deep.include({ type: 'invalid_request_error' });
    expect(JSON.parse(unnamed.text).error.message).to.match(/^tools\.0/);
    expect(upstream.requests).to.have.length(0);
  });

  it('keeps the betas the operator set on the provider beside the client\u2019s own anthropic-beta (Claude Code always sends some)', async () => {
    const betaGw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'agent' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY, headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
      .withModel('claude-test', { model: UPSTREAM_MODEL })
      .with({ routing: { retries: 0 } })
      .start();
    try {
      const request = { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
      await rawPost(`${betaGw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY, 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' }, request);
      expect(upstream.last.headers['anthropic-beta']).to.equal('context-1m-2025-08-07,claude-code-20250219,interleaved-thinking-2025-05-14');
      // one the client names too goes once
      await rawPost(`${betaGw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY, 'anthropic-beta': 'context-1m-2025-08-07' }, request);
      expect(upstream.last.headers['anthropic-beta']).to.equal('context-1m-2025-08-07');
      await rawPost(`${betaGw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, request);
      expect(upstream.last.headers['anthropic-beta']).to.equal('context-1m-2025-08-07');
    } finally {
      await betaGw.close();
    }
  });

  it('sends anthropic-version 2023-06-01 when the client sends none', async () => {
    await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.last.headers['anthropic-version']).to.equal('2023-06-01');
  });

  it('streams the upstream events through, and the SDK assembles a streamed tool call into its input', async () => {
    const events = readFixture('anthropic', 'tool-use.upstream-stream.json');
    upstream.reply({ events });
    const stream = client.messages.stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] });
    const message = await stream.finalMessage();
    expect(upstream.last.body.stream).to.equal(true);
    expect(message.content).to.deep.equal([
      { type: 'thinking', thinking: 'Two lookups needed.', signature: 'EqQBCgIYAhIM' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
    ]);
    expect(message.stop_reason).to.equal('tool_use');
    expect(message.usage).to.include({ input_tokens: 40, output_tokens: 61, cache_read_input_tokens: 2000, cache_creation_input_tokens: 100 });
  });

  it('passes stream frames through byte for byte and sends the cost as a trailer', async () => {
    upstream.reply({ events: textEvents('msg_t', UPSTREAM_MODEL, ['Hel', 'lo'], { input_tokens: 1000, output_tokens: 200 }) });
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).to.equal(200);
    const expected = textEvents('msg_t', UPSTREAM_MODEL, ['Hel', 'lo'], { input_tokens: 1000, output_tokens: 200 })
      .map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`)
      .join('');
    expect(answer.text).to.equal(expected);
    // 1000 x $3 + 200 x $15, per million
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.006');
  });

  it('streams a JSON answer (an upstream or proxy that ignores stream: true) to a client that asked for a stream, as Anthropic\u2019s event sequence, charged once', async () => {
    const content = [
      { type: 'thinking', thinking: 'Two lookups needed.', signature: 'EqQBCgIYAhIM' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
    ];
    const usage = { input_tokens: 21, output_tokens: 512, cache_creation_input_tokens: 300, cache_read_input_tokens: 1200 };
    upstream.reply({ json: { id: 'msg_j', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content, stop_reason: 'tool_use', stop_sequence: null, usage } });
    const message = await client.messages.stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Paris, and the time?' }] }).finalMessage();
    expect(upstream.last.body.stream).to.equal(true);
    expect(message).to.deep.include({ id: 'msg_j', model: UPSTREAM_MODEL, content, stop_reason: 'tool_use', stop_sequence: null });
    expect(message.usage).to.include(usage);

    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.match(/^text\/event-stream/);
    const events = await sseEvents(answer.text);
    expect(events.map((e) => e.event)).to.deep.equal([
      'message_start',
      ...content.flatMap((b) => ['content_block_start', ...(b.type === 'redacted_thinking' || (b.type === 'tool_use' && Object.keys(b.input ?? {}).length === 0) ? [] : b.type === 'thinking' ? ['content_block_delta', 'content_block_delta'] : ['content_block_delta']), 'content_block_stop']),
      'message_delta',
      'message_stop',
    ]);
    // 21 input x $3 + 1200 cache reads x $0.30 + 300 cache writes x $3.75 + 512 output x $15, per million: as the JSON answer
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.009228');
  });

  it('prices a stream’s prompt-cache reads and writes in the cost trailer', async () => {
    upstream.reply({ events: readFixture('anthropic', 'tool-use.upstream-stream.json') });
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).to.equal(200);
    // 40 input x $3 + 2000 cache reads x $0.30 + 100 cache writes x $3.75 + 61 output x $15, per million
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.00201');
  });

  it('prices 1-hour cache writes at their own price (2x input), not the 5-minute one, JSON and streamed', async () => {
    // `cache_control: { ttl: "1h" }`: Anthropic splits the writes by TTL in usage.cache_creation
    const usage = {
      input_tokens: 100,
      cache_creation_input_tokens: 3000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 50,
    };
    const message = { id: 'msg_1h', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, stop_sequence: null };
    upstream.reply({ json: { ...message, content: [{ type: 'text', text: 'Noted.' }], stop_reason: 'end_turn', usage } });
    const request = {
      model: 'claude-listed',
      max_tokens: 100,
      system: [{ type: 'text', text: '<handbook>...</handbook>', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', content: 'Summarise chapter 1.' }],
    };
    const { data, response } = await client.messages.create(request as any).withResponse();
    expect(data.usage.cache_creation).to.deep.equal({ ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 });
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
    const streamed = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { ...request, stream: true });
    expect(streamed.status).to.equal(200);
    expect(streamed.trailers['x-gateway-response-cost']).to.equal('0.0168');
  });

  it('prices a prompt over 200K tokens at Claude Sonnet’s long-context rates, input and output alike, and one of 200K at the standard rates', async () => {
    // the 1M-token context (beta context-1m-2025-08-07): the prompt is input + cache reads + cache writes
    const long = {
      input_tokens: 100000,
      cache_read_input_tokens: 60000,
      cache_creation_input_tokens: 50000,
      cache_creation: { ephemeral_5m_input_tokens: 20000, ephemeral_1h_input_tokens: 30000 },
      output_tokens: 1000,
    };
    const message = { id: 'msg_long', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content: [{ type: 'text', text: 'Read it all.' }], stop_reason: 'end_turn', stop_sequence: null };
    const request = { model: 'claude-listed', max_tokens: 1000, messages: [{ role: 'user', content: 'Summarise the codebase.' }] };
    const headers = { 'anthropic-beta': 'context-1m-2025-08-07' };
    upstream.reply({ json: { ...message, usage: long } });
    const over = await client.messages.create(request as any, { headers }).withResponse();
    // 100K input x $6 + 60K cache reads x $0.60 + 20K 5-minute writes x $7.50 + 30K 1-hour writes x $12 + 1K output x $22.50, per million
    expect(over.response.headers.get('x-gateway-response-cost')).to.equal('1.1685');

    upstream.reply({ json: { ...message, usage: { ...long, input_tokens: 90000 } } });
    const at = await client.messages.create(request as any, { headers }).withResponse();
    // 90K input x $3 + 60K cache reads x $0.30 + 20K x $3.75 + 30K x $6 + 1K output x $15, per million
    expect(at.response.headers.get('x-gateway-response-cost')).to.equal('0.558');
  });

  it('charges the prompt a message_delta restates without cache counts (a server tool\u2019s results grow it; counters that do not apply are left out)', async () => {
    // the web search results are read as input: the final count is in message_delta, which names only the
    // counters that apply (the SDK overwrites each one present)
    const message = { id: 'msg_w', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content: [], stop_reason: null, stop_sequence: null };
    upstream.reply({
      events: [
        { event: 'message_start', data: { type: 'message_start', message: { ...message, usage: { input_tokens: 10, output_tokens: 1 } } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Found it.' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 12000, output_tokens: 300, server_tool_use: { web_search_requests: 1 } } } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    });
    const request = { model: 'claude-test', max_tokens: 1024, stream: true, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Latest release?' }] };
    const final = await client.messages.stream(request as any).finalMessage();
    expect(final.usage).to.include({ input_tokens: 12000, output_tokens: 300 });
    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, request);
    // 12000 x $3 + 300 x $15, per million: what the client's SDK reports too
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.0405');
  });

  it('charges the final usage message_delta reports, not a larger estimate message_start gave, and keeps the cache counts it leaves out', async () => {
    // message_delta's counts are cumulative totals (Anthropic's streaming docs): an upstream that estimates
    // the prompt in message_start (a Messages-compatible server, a proxy) reports the real count there
    const message = { id: 'msg_e', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content: [], stop_reason: null, stop_sequence: null };
    const events = (start: object, final: object) => [
      { event: 'message_start', data: { type: 'message_start', message: { ...message, usage: start } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: final } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ];
    const request = { model: 'claude-test', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'Go.' }] };
    upstream.reply({ events: events({ input_tokens: 5000, output_tokens: 1 }, { input_tokens: 1200, output_tokens: 300 }) });
    const final = await client.messages.stream(request as any).finalMessage();
    expect(final.usage).to.include({ input_tokens: 1200, output_tokens: 300 });
    let answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, request);
    // 1200 x $3 + 300 x $15, per million: what the client's SDK reports
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.0081');

    // a counter message_delta leaves out keeps message_start's value, as the SDK keeps it
    upstream.reply({ events: events({ input_tokens: 10, cache_read_input_tokens: 2000, output_tokens: 1 }, { input_tokens: 12000, output_tokens: 300 }) });
    answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, request);
    // 12000 x $3 + 2000 cache reads x $0.30 + 300 x $15, per million
    expect(answer.trailers['x-gateway-response-cost']).to.equal('0.0411');
  });

  it('charges the server-side compaction Anthropic bills outside the top-level usage, JSON and streamed', async () => {
    // compact_20260112 (beta): summarising the old context is a sampling step of its own, reported only as a
    // `compaction` entry of usage.iterations; the top-level counts are the answer's step alone
    const usage = {
      input_tokens: 23000,
      output_tokens: 1000,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      iterations: [
        { type: 'compaction', input_tokens: 180000, output_tokens: 3500, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000 },
        { type: 'message', input_tokens: 23000, output_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      ],
    };
    const request = {
      model: 'claude-test',
      max_tokens: 4096,
      context_management: { edits: [{ type: 'compact_20260112' }] },
      messages: [{ role: 'user', content: 'Carry on with the refactor.' }],
    };
    const headers = { 'x-api-key': CLIENT_KEY, 'anthropic-beta': 'compact-2026-01-12' };
    const content = [
      { type: 'compaction', content: 'Summary of the conversation so far: ...' },
      { type: 'text', text: 'Continuing.' },
    ];
    upstream.reply({ json: { id: 'msg_c', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content, stop_reason: 'end_turn', stop_sequence: null, usage } });
    const json = await rawPost(`${gw.url}/native/v1/messages`, headers, request);
    expect(json.status).to.equal(200);
    // (23000 + 180000) x $3 + 2000 cache reads x $0.30 + (1000 + 3500) x $15, per million
    expect(json.headers['x-gateway-response-cost']).to.equal('0.6771');

    upstream.reply({
      events: [
        { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_c', type: 'message', role: 'assistant', model: UPSTREAM_MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 23000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Continuing.' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    });
    const streamed = await rawPost(`${gw.url}/native/v1/messages`, headers, { ...request, stream: true });
    expect(streamed.status).to.equal(200);
    expect(streamed.trailers['x-gateway-response-cost']).to.equal('0.6771');
  });

  it('counts tokens through /native/v1/messages/count_tokens', async () => {
    upstream.reply({ json: { input_tokens: 42 } });
    const counted = await client.messages.countTokens({ model: 'claude-test', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] });
    expect(counted).to.deep.equal({ input_tokens: 42 });
    expect(upstream.last.path).to.equal('/v1/messages/count_tokens');
    expect(upstream.last.body).to.deep.equal({ model: UPSTREAM_MODEL, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('gives the Anthropic SDK the gateway\u2019s request id as request-id (message._request_id, err.requestID), JSON, streamed and refused, on both paths', async () => {
    const message = await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(message.request_id).to.be.a('string').that.equals(message.response.headers.get('x-gateway-request-id'));

    upstream.reply({ events: textEvents('msg_1', UPSTREAM_MODEL, ['hello']) });
    const streamed = await client.messages.create({ model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    for await (const _event of streamed.data) void _event;
    expect(streamed.response.headers.get('request-id')).to.be.a('string').that.equals(streamed.response.headers.get('x-gateway-request-id'));

    const refused = await client.messages.create({ model: 'claude-nope', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(refused).to.be.instanceOf(Anthropic.NotFoundError);
    expect(refused.requestID).to.be.a('string').that.equals(refused.headers.get('x-gateway-request-id'));

    const unauthenticated = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-not-a-key', maxRetries: 0 });
    const denied = await unauthenticated.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(denied.requestID).to.be.a('string').that.equals(denied.headers.get('x-gateway-request-id'));

    upstream.reply({ json: readFixture('anthropic', 'cached-usage.upstream-response.json') });
    const deprecated = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
    const viaAlias = await deprecated.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(viaAlias.request_id).to.be.a('string').that.equals(viaAlias.response.headers.get('x-gateway-request-id'));
  });

  it('keeps the Anthropic upstream\u2019s own anthropic-ratelimit-*, x-should-retry and request-id headers from the client: they describe the gateway\u2019s provider account and attempt, not the client', async () => {
    const upstreamHeaders = {
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '3',
      'anthropic-ratelimit-tokens-remaining': '1200',
      'x-should-retry': 'true',
      'request-id': 'req_upstream_1',
    };
    const leaked = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('anthropic-ratelimit-') || name === 'x-should-retry' || headers.get(name) === 'req_upstream_1');

    upstream.reply({ json: readFixture('anthropic', 'cached-usage.upstream-response.json'), headers: upstreamHeaders });
    const answer = await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(leaked(answer.response.headers)).to.deep.equal([]);

    upstream.reply({ events: textEvents('msg_1', UPSTREAM_MODEL, ['hello']), headers: upstreamHeaders });
    const streamed = await client.messages.create({ model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    for await (const _event of streamed.data) void _event;
    expect(leaked(streamed.response.headers)).to.deep.equal([]);

    upstream.reply({ error: { status: 429, type: 'rate_limit_error', message: 'slow down' }, headers: { ...upstreamHeaders, 'x-should-retry': 'false', 'retry-after': '7' } });
    const refused = await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(refused).to.be.instanceOf(Anthropic.RateLimitError);
    expect(refused.headers.get('retry-after')).to.equal('7');
    expect(leaked(refused.headers)).to.deep.equal([]);
  });

  describe('deprecated alias POST /v1/messages', () => {
    it('answers the same and marks itself deprecated with a Link to /native/v1/messages', async () => {
      const aliasClient = new Anthropic({ baseURL: gw.url, apiKey: CLIENT_KEY, maxRetries: 0 });
      const { data, response } = await aliasClient.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(data).to.deep.equal(readFixture('anthropic', 'cached-usage.upstream-response.json'));
      expect(response.headers.get('deprecation')).to.equal('true');
      expect(response.headers.get('link')).to.equal('</native/v1/messages>; rel="successor-version"');
      expect(upstream.last.path).to.equal('/v1/messages');
    });

    it('also serves count_tokens under the old path, pointing at the new one', async () => {
      upstream.reply({ json: { input_tokens: 7 } });
      const answer = await rawPost(`${gw.url}/v1/messages/count_tokens`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] });
      expect({ status: answer.status, body: JSON.parse(answer.text), link: answer.headers.link, deprecation: answer.headers.deprecation }).to.deep.equal({
        status: 200,
        body: { input_tokens: 7 },
        link: '</native/v1/messages/count_tokens>; rel="successor-version"',
        deprecation: 'true',
      });
    });

    it('marks its error answers too', async () => {
      const answer = await rawPost(`${gw.url}/v1/messages`, { 'x-api-key': 'sk-wrong' }, { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.status).to.equal(401);
      expect(answer.headers.deprecation).to.equal('true');
      expect(JSON.parse(answer.text)).to.deep.equal({ type: 'error', error: { type: 'authentication_error', message: 'Invalid API key.' } });
    });
  });

  describe('errors in the Anthropic shape', () => {
    async function sdkError(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
      try {
        await promise;
      } catch (err) {
        expect(err).to.be.instanceOf(Anthropic.APIError);
        return err as InstanceType<typeof Anthropic.APIError>;
      }
      throw new Error('expected an error');
    }

    it('a wrong key is a 401 authentication_error', async () => {
      const bad = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-not-a-key', maxRetries: 0 });
      const err = await sdkError(bad.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
      expect(err.error).to.deep.equal({ type: 'error', error: { type: 'authentication_error', message: 'Invalid API key.' } });
      expect(upstream.requests).to.have.length(0);
    });

    it('a missing max_tokens is a 400 invalid_request_error naming the field', async () => {
      const answer = await rawPost(`${gw.url}/native/v1/messages`, { authorization: `Bearer ${CLIENT_KEY}` }, { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.text)).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    });

    it('a body that is not JSON is a 400 invalid_request_error', async () => {
      const res = await fetch(`${gw.url}/native/v1/messages`, { method: 'POST', headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json' }, body: '{"model": ' });
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'The request body is not valid JSON.' } });
    });

    it('an unknown path under /native is a 404 not_found_error', async () => {
      const res = await fetch(`${gw.url}/native/v1/messages/batches`, { method: 'POST', headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).to.equal(404);
      expect(((await res.json()) as any).error.type).to.equal('not_found_error');
    });

    it('an unknown model is a 404 not_found_error', async () => {
      const err = await sdkError(client.messages.create({ model: 'claude-nope', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(404);
      expect((err.error as any).error.type).to.equal('not_found_error');
    });

    it('an upstream rate limit stays a 429 rate_limit_error with Retry-After', async () => {
      upstream.reply({ error: { status: 429, type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }, headers: { 'retry-after': '7' } });
      const err = await sdkError(client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err).to.be.instanceOf(Anthropic.RateLimitError);
      expect(err.headers?.get('retry-after')).to.equal('7');
      expect(err.error).to.deep.equal({
        type: 'error',
        error: { type: 'rate_limit_error', message: 'The Anthropic upstream rate-limited the request: Number of request tokens has exceeded your per-minute rate limit' },
      });
    });

    it('an overloaded upstream (529) is a 503 overloaded_error', async () => {
      upstream.reply({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
      const err = await sdkError(client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(503);
      expect(err.error).to.deep.equal({ type: 'error', error: { type: 'overloaded_error', message: 'The Anthropic upstream is overloaded: Overloaded' } });
    });

    it('an upstream billing refusal (402 billing_error, the gateway\u2019s own Anthropic account) is a 502 api_error that says so, not the client\u2019s 402', async () => {
      upstream.reply({ error: { status: 402, type: 'billing_error', message: 'Your credit balance is too low to access the Anthropic API.' } });
      const err = await sdkError(client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect({ status: err.status, error: err.error }).to.deep.equal({
        status: 502,
        error: {
          type: 'error',
          error: { type: 'api_error', message: 'The Anthropic upstream refused the gateway\u2019s provider account for billing; ask the gateway operator to check its plan and credits.' },
        },
      });
    });

    it('an upstream 500 is a 502 api_error', async () => {
      upstream.reply({ error: { status: 500, type: 'api_error', message: 'Internal server error' } });
      const err = await sdkError(client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).to.equal(502);
      expect((err.error as any).error.type).to.equal('api_error');
    });

    it('an error after the stream started ends it with one `event: error` the SDK raises', async () => {
      const start = textEvents('msg_e', UPSTREAM_MODEL, ['partial']).slice(0, 4);
      upstream.reply({ events: [...start, { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }] });
      const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const events = await sseEvents(answer.text);
      expect(events.map((e) => e.event)).to.deep.equal(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'error']);
      expect(events[4].data).to.deep.equal({ type: 'error', error: { type: 'overloaded_error', message: 'The Anthropic upstream is overloaded: Overloaded' } });

      upstream.reply({ events: [...start, { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }] });
      const stream = client.messages.stream({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      const err = await sdkError(stream.finalMessage());
      expect((err.error as any).error.type).to.equal('overloaded_error');
    });

    it('a stream the upstream cuts mid-way ends with an error event', async () => {
      upstream.reply({ events: textEvents('msg_c', UPSTREAM_MODEL, ['partial']).slice(0, 4), cut: true });
      const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const events = await sseEvents(answer.text);
      expect(events[events.length - 1].event).to.equal('error');
      expect(events[events.length - 1].data).to.deep.equal({ type: 'error', error: { type: 'api_error', message: 'The upstream connection broke in the middle of the stream.' } });
      expect(events.slice(0, -1).map((e) => e.event)).to.deep.equal(['message_start', 'content_block_start', 'ping', 'content_block_delta']);
    });

    it('never shows the provider key or upstream URL in an error or log line', async () => {
      upstream.reply({ error: { status: 400, type: 'invalid_request_error', message: `bad request to ${upstream.url}/v1/messages with key ${PROVIDER_KEY}` } });
      const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': CLIENT_KEY }, { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.status).to.equal(400);
      expect(answer.text).to.not.include(PROVIDER_KEY);
      expect(answer.text).to.not.include(upstream.url);
      expect(gw.logLines.join('\n')).to.not.include(PROVIDER_KEY);
      expect(gw.logLines.join('\n')).to.not.include(CLIENT_KEY);
    });
  });
});

describe('count_tokens against a key\u2019s budget and tokens per minute (Anthropic SDK)', () => {
  const LIMITED_KEY = 'sk-client-counting-limited-1';
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      // room for small Messages requests; a 4,096-token output allowance at $15/M ($0.061) would not fit
      .withKey(LIMITED_KEY, { id: 'counter', maxBudget: 0.05, tpm: 1_000 })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { model: UPSTREAM_MODEL, id: 'claude/sonnet', price: { inputPerMTok: 3, outputPerMTok: 15 } })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('reserves nothing for a count_tokens call in flight: a Messages request beside it is not refused', async () => {
    let answerCount!: () => void;
    const held = new Promise<void>((resolve) => (answerCount = resolve));
    upstream.reply(async (request) => {
      if (request.path === '/v1/messages/count_tokens') {
        await held;
        return { json: { input_tokens: 1_500 } };
      }
      return { json: readFixture('anthropic', 'cached-usage.upstream-response.json') };
    });
    const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: LIMITED_KEY, maxRetries: 0 });
    // a long prompt to count (about 1,500 tokens, more than the key's tokens per minute) that generates nothing
    const counting = client.messages.countTokens({ model: 'claude-test', system: 'x'.repeat(6_000), messages: [{ role: 'user', content: 'hi' }] });
    while (!upstream.requests.some((r) => r.path === '/v1/messages/count_tokens')) await new Promise((r) => setTimeout(r, 10));

    const answer = await rawPost(`${gw.url}/native/v1/messages`, { 'x-api-key': LIMITED_KEY }, { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    answerCount();
    expect({ status: answer.status, body: JSON.parse(answer.text) }).to.deep.equal({ status: 200, body: readFixture('anthropic', 'cached-usage.upstream-response.json') });
    expect(await counting).to.deep.equal({ input_tokens: 1_500 });
  });
});
