import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion, type RecordedRequest, type Script } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawSse } from './responses-support';

const KEY = 'sk-limits-CANARY-51';
const OTHER = 'sk-limits-other-CANARY-52';
const MCP_TOOL = [{ type: 'mcp' as const, server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' as const }];

function askOnce(name: string, args: unknown, after: (req: RecordedRequest) => Script): (req: RecordedRequest) => Script {
  return (req) => {
    if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return after(req);
    const message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
    return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
  };
}

describe('Responses: time limit, failures, guardrails on tool results, other providers', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;
  let client: OpenAI;
  const clock = { t: Date.parse('2026-01-01T00:00:00Z'), now() { return this.t; } };

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({
      toolsOnly: true,
      tools: {
        // a slow tool: time passes (on the injected clock) while it runs
        crawl: { handler: () => ((clock.t += 120_000), { content: [{ type: 'text', text: 'crawled' }] }) },
        contact: { handler: () => ({ content: [{ type: 'text', text: 'Write to jane.doe@example.com' }] }) },
      },
    });
    gw = await testConfig()
      .withKey(KEY, { id: 'limits', mcp: { servers: ['tools'] } })
      .withKey(OTHER, { id: 'other' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('gpt-test', { provider: 'oai', model: 'upstream-model' })
      .withModel('echo')
      .withMcpServer('tools', tools.url, { org: 'acme', visibility: 'private' })
      .with({
        guardrails: [{ id: 'mask-pii', engine: 'pii-mask', phase: 'post', on: ['mcp'], default: true }],
        mcp: { healthCheckIntervalSeconds: 0 },
        responses: { timeLimitSeconds: 60 },
      })
      .start({ clock });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('ends incomplete (time_limit) when responses.timeLimitSeconds has passed, without another model round', async () => {
    upstream.script = askOnce('crawl', {}, () => ({ kind: 'json', body: chatCompletion('done') }));
    const data = await client.responses.create({ model: 'gpt-test', input: 'crawl it', tools: MCP_TOOL });
    expect(data.status).to.equal('incomplete');
    expect(data.incomplete_details).to.deep.equal({ reason: 'time_limit' });
    expect(data.output.map((i) => i.type)).to.deep.equal(['mcp_list_tools', 'mcp_call']);
    expect(upstream.requests).to.have.length(1);
  });

  it('masks personal data in a tool result before the model (and the client) see it', async () => {
    upstream.script = askOnce('contact', {}, (req) => ({ kind: 'json', body: chatCompletion(`model saw: ${(req.body.messages as any[]).at(-1).content}`) }));
    const data = await client.responses.create({ model: 'gpt-test', input: 'who to write to?', tools: MCP_TOOL });
    const call = data.output[1] as any;
    expect(call.output).to.not.include('jane.doe@example.com');
    expect(data.output_text).to.equal(`model saw: ${call.output}`);
  });

  it('ends a stream whose second round fails with an error event and response.failed', async () => {
    upstream.script = askOnce('contact', {}, () => ({ kind: 'json', status: 500, body: { error: { message: 'upstream exploded', type: 'server_error' } } }));
    const { status, events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'x', stream: true, tools: MCP_TOOL });
    expect(status).to.equal(200);
    const types = events.map((e) => e.type);
    expect(types.slice(-2)).to.deep.equal(['error', 'response.failed']);
    expect(types).to.include('response.mcp_call.completed');
    expect(events.at(-1).response.status).to.equal('failed');
  });

  it('answers a model refused at once with a plain HTTP error, even when streaming', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'missing-model', input: 'x', stream: true }),
    });
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-type')).to.include('application/json');
    expect(((await res.json()) as any).error).to.deep.include({ type: 'not_found_error', param: 'model', code: 'model_not_found' });
  });

  it('keeps a stored response to its own key', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('hello') };
    const first = await client.responses.create({ model: 'gpt-test', input: 'hi' });
    const other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: OTHER, maxRetries: 0 });
    const err = await other.responses.create({ model: 'gpt-test', input: 'again', previous_response_id: first.id }).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    const mine = await client.responses.create({ model: 'gpt-test', input: 'again', previous_response_id: first.id });
    expect(mine.output_text).to.equal('hello');
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'again' },
    ]);
  });

  it('serves a provider without a Responses API of its own (echo), streamed', async () => {
    const stream = await client.responses.create({ model: 'echo', input: 'ping pong', stream: true });
    let text = '';
    let final: any;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') final = event.response;
    }
    expect(text).to.equal(final.output[0].content[0].text);
    expect(text).to.include('ping pong');
    expect(final.usage.output_tokens).to.be.greaterThan(0);
  });
});
