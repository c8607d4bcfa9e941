/**
 * MCP methods that reach an upstream run the whole pipeline (issue 12 parts 2 and 3): prompts/get and
 * resources/read are guarded, priced and logged like tool calls; a tool call the client gives up on is
 * recorded as a client abort whichever endpoint ran it; the admin key may use MCP but never a model,
 * not even through a gateway_proxy tool.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FakeMcpServer } from '../support/fake-mcp-server';
import { startGateway, type TestGateway } from '../support/start-gateway';

const KEY = 'sk-mcp-exchanges-CANARY-61';
const ADMIN = 'sk-mcp-exchanges-admin-CANARY-62';
const EMAIL = 'ada@example.org';

describe('MCP exchanges: prompts, resources, aborts and the admin key through the stages', () => {
  let upstream: FakeOpenAI;
  let docs: FakeMcpServer;
  let gw: TestGateway;
  let releaseSlowTool: () => void = () => undefined;
  /** the arguments each prompts/get of `greet` brought to the upstream */
  const greeted: Record<string, string>[] = [];

  before(async () => {
    upstream = await new FakeOpenAI().start();
    docs = await FakeMcpServer.start({
      tools: {
        ping: { handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) },
        slow: { handler: () => new Promise((resolve) => (releaseSlowTool = () => resolve({ content: [{ type: 'text', text: 'late' }] }))) },
      },
      prompts: {
        contact: { text: () => `Write to ${EMAIL}` },
        greet: { arguments: [{ name: 'who' }], text: (args) => (greeted.push(args), 'Hello') },
        account: {
          text: () => {
            throw new McpError(ErrorCode.InvalidParams, `No account for ${EMAIL}`);
          },
        },
      },
      resources: { 'docs://people': { name: 'people', text: `Owner: ${EMAIL}` } },
      resourceTemplates: [
        {
          uriTemplate: 'docs://accounts/{id}',
          name: 'account',
          read: () => {
            throw new McpError(ErrorCode.InvalidParams, `Account of ${EMAIL} is closed`);
          },
        },
      ],
    });
    gw = await startGateway({
      adminKey: ADMIN,
      organizations: [{ id: 'acme' }],
      keys: [{ key: KEY, org: 'acme', id: 'mcp-exchanges' }],
      providers: [
        { id: 'local', type: 'echo' },
        { id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider' },
      ],
      models: [
        { name: 'echo', provider: 'local' },
        { name: 'gpt-test', provider: 'oai', model: 'upstream-model' },
      ],
      mcpServers: [{ name: 'docs', url: docs.url, visibility: 'public', pricePerCall: 0.5 }],
      mcp: { healthCheckIntervalSeconds: 0 },
      guardrails: [
        { id: 'mask-pii', engine: 'pii-mask', phase: 'post', default: true },
        { id: 'mask-pii-in', engine: 'pii-mask', phase: 'pre', on: ['mcp'], default: true },
      ],
    });
  });
  after(async () => {
    releaseSlowTool();
    await gw.close();
    await upstream.stop();
    await docs.close();
  });

  function mcpPost(key: string, message: unknown, headers: Record<string, string> = {}) {
    return fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-gateway-api-key': `Bearer ${key}`, ...headers },
      body: JSON.stringify(message),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  }

  async function entry(model: string) {
    await gw.gateway.services.pipeline.whenSettled(5000);
    return (await gw.gateway.services.requestLog.query({ limit: 100 })).data.find((e) => e.model === model);
  }

  it('prompts/get: the post-guardrail masks the prompt text; logged as `MCP: prompt <name>` with the fee', async () => {
    const { body } = await mcpPost(KEY, { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'docs-contact' } });
    expect(body.result.messages[0].content.text).to.equal('Write to [EMAIL]');
    const logged = await entry('MCP: prompt docs-contact');
    expect(logged).to.deep.include({ keyId: 'mcp-exchanges', endpoint: 'mcp', cost: 0.5, status: 200, deploymentId: 'mcp:docs' });
    expect(JSON.stringify(logged)).to.not.include(EMAIL);
  });

  it('prompts/get: the pre-guardrail masks the prompt arguments before the upstream sees them, as it does tool arguments', async () => {
    const { body } = await mcpPost(KEY, { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'docs-greet', arguments: { who: `Ada <${EMAIL}>` } } });
    expect(body.result.messages[0].content.text).to.equal('Hello');
    expect(greeted).to.deep.equal([{ who: 'Ada <[EMAIL]>' }]);
    expect(JSON.stringify(await entry('MCP: prompt docs-greet'))).to.not.include(EMAIL);
  });

  it('resources/read: the post-guardrail masks the resource text; logged as `MCP: resource <uri>` with the fee', async () => {
    const { body } = await mcpPost(KEY, { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'docs://people' } });
    expect(body.result.contents[0].text).to.equal('Owner: [EMAIL]');
    expect(await entry('MCP: resource docs://people')).to.deep.include({ keyId: 'mcp-exchanges', cost: 0.5, status: 200 });
  });

  it("prompts/get and resources/read: the post-guardrail masks an upstream's JSON-RPC error message as it does their results", async () => {
    const prompt = await mcpPost(KEY, { jsonrpc: '2.0', id: 5, method: 'prompts/get', params: { name: 'docs-account' } });
    expect(prompt.body.error).to.deep.equal({ code: -32002, message: 'MCP server docs returned an error: MCP error -32602: No account for [EMAIL]', data: { code: 'mcp_upstream_rpc_error' } });
    const read = await mcpPost(KEY, { jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'docs://accounts/7' } });
    expect(read.body.error.message).to.equal('MCP server docs returned an error: MCP error -32602: Account of [EMAIL] is closed');
    const logged = await entry('MCP: prompt docs-account');
    expect(logged?.details?.guardrails).to.deep.include({ id: 'mask-pii', phase: 'post', verdict: 'mask', findings: ['EMAIL'] });
  });

  it('records a Responses tool call the client gave up on as client_abort, like every other request kind', async () => {
    upstream.script = {
      kind: 'json',
      body: chatCompletion('', undefined, {
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'docs-slow', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
      }),
    };
    const abort = new AbortController();
    const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const request = openai.responses
      .create({ model: 'gpt-test', input: 'go', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] }, { signal: abort.signal })
      .catch((e: unknown) => e);
    // wait until the tool call reached the upstream server, then go away
    for (let i = 0; i < 200 && !docs.requests.some((r) => r.rpcMethods.includes('tools/call')); i++) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await request;
    for (let i = 0; i < 200 && !(await entry('MCP: docs-slow')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await entry('MCP: docs-slow')).to.deep.include({ status: 499, outcome: 'client_abort', endpoint: 'responses' });
    expect(await entry('gpt-test')).to.deep.include({ status: 499, outcome: 'client_abort', endpoint: 'responses' });
  });

  it('lets the admin key call an MCP tool but not a model behind gateway_proxy (no model call, nothing charged)', async () => {
    const tool = await mcpPost(ADMIN, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'docs-ping', arguments: {} } });
    expect(tool.body.result).to.deep.equal({ content: [{ type: 'text', text: 'pong' }] });
    const model = await mcpPost(ADMIN, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'gateway_proxy-echo', arguments: { prompt: 'hi' } } });
    expect(model.body.error.data.code).to.equal('admin_key_not_allowed');
    const logged = await entry('MCP: gateway_proxy-echo');
    expect(logged).to.deep.include({ status: 403, cost: 0, errorCode: 'admin_key_not_allowed', promptTokens: 0 });
  });
});
