import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeAnthropicUpstream, type RecordedRequest } from '../providers/anthropic/fake-anthropic-upstream';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-resp-claude-CANARY-61';
const PROVIDER_KEY = 'sk-ant-test-upstream-key';
const MCP_TOOL = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' as const }];

/** The tool_result blocks Claude has been sent so far. */
const toolResults = (req: RecordedRequest) =>
  (req.body.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_result');

const usage = { input_tokens: 50, output_tokens: 10 };

describe('Responses tool loop on an Anthropic model (Responses -> chat -> Messages and back)', () => {
  let upstream: FakeAnthropicUpstream;
  let docs: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    docs = await FakeMcpServer.start({
      toolsOnly: true,
      tools: { search: { description: 'Search', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, handler: (a) => ({ content: [{ type: 'text', text: `found ${a.q}` }] }) } },
    });
    gw = await testConfig()
      .withKey(KEY, { id: 'claude-agent' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-test', { model: 'claude-upstream', price: { inputPerMTok: 3, outputPerMTok: 15 } })
      .withMcpServer('docs', docs.url, { org: 'acme', visibility: 'private' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await docs.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('runs the loop with Claude tool_use / tool_result blocks (JSON)', async () => {
    upstream.reply((req) => {
      const results = toolResults(req);
      if (results.length > 0) {
        const text = results.map((b: any) => (typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text).join(''))).join(' ');
        return { json: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text: `Claude read: ${text}` }], stop_reason: 'end_turn', stop_sequence: null, usage } };
      }
      return {
        json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'tool_use', id: 'toolu_1', name: 'docs-search', input: { q: 'llamas' } }], stop_reason: 'tool_use', stop_sequence: null, usage },
      };
    });
    const { data, response } = await client.responses.create({ model: 'claude-test', input: 'llamas?', instructions: 'Be brief.', tools: MCP_TOOL }).withResponse();
    expect(data.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(data.output[1]).to.deep.include({ name: 'docs-search', arguments: '{"q":"llamas"}', output: 'found llamas' });
    expect(data.output_text).to.equal('Claude read: found llamas');
    const first = upstream.requests[0].body;
    expect(first.system).to.satisfy((s: unknown) => JSON.stringify(s).includes('Be brief.'));
    // the upstream server's tool, and the gateway_proxy tool of the model itself (every key sees its
    // models); two servers reachable, so both carry their alias
    expect(first.tools.map((t: any) => t.name)).to.deep.equal(['docs-search', 'gateway_proxy-claude_test']);
    // 2 rounds x (50 x $3 + 10 x $15)/M
    expect(response.headers.get('x-gateway-response-cost')).to.equal('0.0006');
  });

  it('continues (previous_response_id) after Claude ended a tool loop with an empty answer', async () => {
    upstream.reply((req) => {
      const messages = req.body.messages as any[];
      // what api.anthropic.com checks
      const empty = messages.findIndex((m, i) => i < messages.length - 1 && (m.content === '' || (Array.isArray(m.content) && m.content.length === 0)));
      if (empty >= 0) return { error: { status: 400, type: 'invalid_request_error', message: `messages.${empty}: all messages must have non-empty content except for the optional final assistant message` } };
      const last = messages.at(-1);
      if (last.role === 'user' && typeof last.content === 'string') {
        const text = messages.length === 1 ? null : `Claude read: ${toolResults(req).length} result`;
        if (text) return { json: { id: 'msg_3', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage } };
        return { json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'tool_use', id: 'toolu_e', name: 'docs-search', input: { q: 'owls' } }], stop_reason: 'tool_use', stop_sequence: null, usage } };
      }
      // Claude sometimes ends its turn after a tool result without a word
      return { json: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-upstream', content: [], stop_reason: 'end_turn', stop_sequence: null, usage } };
    });
    const first = await client.responses.create({ model: 'claude-test', input: 'owls?', tools: MCP_TOOL });
    // the answer is still a message (empty), as OpenAI's is, so a client knows the response is final
    expect(first.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect(first.output_text).to.equal('');
    const second = await client.responses.create({ model: 'claude-test', previous_response_id: first.id, input: 'And?', tools: MCP_TOOL });
    expect(second.output_text).to.equal('Claude read: 1 result');
    // and sent back as items (the Agents SDK's history), the empty message is not an empty turn for Claude
    const again = await client.responses.create({ model: 'claude-test', input: [{ role: 'user', content: 'owls?' }, ...(first.output as any[]), { role: 'user', content: 'And?' }], tools: MCP_TOOL });
    expect(again.output_text).to.equal('Claude read: 1 result');
  });

  it('streams the loop from Claude events', async () => {
    upstream.reply((req) => {
      const done = toolResults(req).length > 0;
      const start = { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_s', type: 'message', role: 'assistant', model: 'claude-upstream', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } } };
      const end = [
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: done ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: 10 } } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ];
      const block = done
        ? [
            { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Streamed ' } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'answer' } } },
            { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          ]
        : [
            { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_s', name: 'docs-search', input: {} } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":' } } },
            { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"yaks"}' } } },
            { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          ];
      return { events: [start, ...block, ...end] };
    });
    const stream = await client.responses.create({ model: 'claude-test', input: 'yaks?', stream: true, tools: MCP_TOOL });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const call = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'mcp_call').item;
    expect(call).to.deep.include({ name: 'docs-search', arguments: '{"q":"yaks"}', output: 'found yaks', status: 'completed' });
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).to.deep.equal(['Streamed ', 'answer']);
    const final = events.at(-1);
    expect(final.type).to.equal('response.completed');
    expect(final.response.usage).to.deep.include({ input_tokens: 100, output_tokens: 20 });
  });
});
