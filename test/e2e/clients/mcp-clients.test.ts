/**
 * Third-party MCP clients on the gateway's /mcp, as their users register it: the AI SDK's MCP client
 * (`@ai-sdk/mcp`), LangChain's MultiServerMCPClient, and the OpenAI Agents SDK's streamable-HTTP server,
 * each with `x-gateway-api-key` and with `Authorization: Bearer` (all many clients can set), listing the
 * tools and calling one. The Agents SDK also runs an agent that calls the tool through a chat model.
 */
import { expect } from 'chai';
import { experimental_createMCPClient as createMCPClient } from '@ai-sdk/mcp';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { Agent, MCPServerStreamableHttp, OpenAIChatCompletionsModel, Runner, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import { FakeOpenAI, chatCompletion, type RecordedRequest, type Script } from '../../support/fake-openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-mcp-clients-CANARY-9c1';
const headersFor = { 'x-gateway-api-key': { 'x-gateway-api-key': `Bearer ${KEY}` }, 'Authorization: Bearer': { authorization: `Bearer ${KEY}` } } as const;

describe('third-party MCP clients on /mcp', () => {
  let tools: FakeMcpServer;
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    setTracingDisabled(true);
    tools = await FakeMcpServer.start({
      toolsOnly: true,
      tools: {
        lookup: {
          description: 'Look a word up',
          inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
          handler: (a) => ({ content: [{ type: 'text', text: `${a.word}: a small domesticated feline` }] }),
        },
      },
    });
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY, { id: 'mcp-clients', mcp: { servers: ['kb'] } })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 }, routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await tools.close();
    await upstream.stop();
  });

  for (const [how, headers] of Object.entries(headersFor)) {
    it(`AI SDK MCP client lists and calls the tool (${how})`, async () => {
      const client = await createMCPClient({ transport: { type: 'http', url: `${gw.url}/mcp`, headers: { ...headers } } });
      try {
        const found = await client.tools();
        expect(Object.keys(found)).to.include('lookup');
        const result: any = await found['lookup'].execute!({ word: 'cat' }, { toolCallId: 't1', messages: [] } as any);
        expect(result.content[0].text).to.equal('cat: a small domesticated feline');
      } finally {
        await client.close();
      }
    });

    it(`LangChain MultiServerMCPClient lists and calls the tool (${how})`, async () => {
      const client = new MultiServerMCPClient({ mcpServers: { gw: { transport: 'http', url: `${gw.url}/mcp`, headers: { ...headers } } }, useStandardContentBlocks: true });
      try {
        const found = await client.getTools();
        const lookup = found.find((t) => t.name.endsWith('lookup'));
        expect(lookup, found.map((t) => t.name).join(', ')).to.exist;
        const result = await lookup!.invoke({ word: 'cat' });
        expect(JSON.stringify(result)).to.include('cat: a small domesticated feline');
      } finally {
        await client.close();
      }
    });

    it(`OpenAI Agents SDK: an agent on a chat-completions model calls the tool through /mcp (${how})`, async () => {
      upstream.script = (req: RecordedRequest): Script => {
        const toolMessage = (req.body.messages as any[]).find((m) => m.role === 'tool');
        if (toolMessage) return { kind: 'json', body: chatCompletion(`Found: ${toolMessage.content.includes('feline') ? 'a feline' : 'nothing'}.`) };
        const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"word":"cat"}' } };
        return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }) };
      };
      const server = new MCPServerStreamableHttp({ url: `${gw.url}/mcp`, name: 'gateway', requestInit: { headers: { ...headers } } });
      await server.connect();
      try {
        const listed = await server.listTools();
        expect(listed.map((t) => t.name)).to.include('lookup');
        const model = new OpenAIChatCompletionsModel(new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 }) as any, 'gpt-test');
        const agent = new Agent({ name: 'lookup', instructions: 'Use the tool.', model, mcpServers: [server] });
        const result = await new Runner().run(agent, 'What is a cat?');
        expect(result.finalOutput).to.equal('Found: a feline.');
        expect(upstream.requests.at(-2)!.body.tools.map((t: any) => t.function.name)).to.include('lookup');
      } finally {
        await server.close();
      }
    });
  }
});
