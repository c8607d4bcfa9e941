/**
 * The demo MCP server `demo` (tools `time`, `calc`, `lookup`), run inside the gateway process. It is an
 * MCP transport plugin: a server registered with `transport: 'mcp-demo'` is connected through an SDK
 * in-memory transport pair to a fresh SDK `Server` holding the demo tools, so the gateway treats it like
 * any upstream (discovery, tool states, scope, guardrails, cost) with no port, process or network. The
 * server's `url` is not used.
 */
import type * as InMemorySdk from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type * as ServerSdk from '@modelcontextprotocol/sdk/server/index.js';
import type * as TypesSdk from '@modelcontextprotocol/sdk/types.js';
import { definePlugin, type McpTransportFactory } from '../../core/plugins/sdk';
import { DEMO_TOOLS } from './tools';

const TOOLS = new Map(DEMO_TOOLS.map((t) => [t.name, t]));

// The SDK is required when a demo server is first connected, not when the plugin is registered: a
// gateway without one never loads it (core/apis/mcp/sdk.ts says why).
function demoServer(): Server {
  const { Server } = require('@modelcontextprotocol/sdk/server/index.js') as typeof ServerSdk;
  const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js') as typeof TypesSdk;
  const server = new Server({ name: 'model-gateway-demo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: DEMO_TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.get(request.params.name);
    if (!tool) return { content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }], isError: true };
    try {
      return { content: [{ type: 'text', text: tool.run(request.params.arguments ?? {}) }] };
    } catch (err) {
      return { content: [{ type: 'text', text: `${tool.name}: ${(err as Error).message}` }], isError: true };
    }
  });
  return server;
}

export function createDemoFactory(): McpTransportFactory {
  const open = new Set<Server>();
  return {
    async connect() {
      const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js') as typeof InMemorySdk;
      const [client, server] = InMemoryTransport.createLinkedPair();
      const instance = demoServer();
      open.add(instance);
      instance.onclose = () => open.delete(instance);
      await instance.connect(server);
      return client;
    },
    async close() {
      await Promise.all([...open].map((s) => s.close()));
    },
  };
}

export default definePlugin<'mcp-transport', Record<string, never>, McpTransportFactory>({
  kind: 'mcp-transport',
  id: 'mcp-demo',
  apiVersion: 1,
  optionsSchema: { type: 'object', properties: {}, additionalProperties: false } as never,
  create: () => createDemoFactory(),
});
