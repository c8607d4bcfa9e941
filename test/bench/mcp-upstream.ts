/**
 * The benchmark's MCP upstream: the tests' SDK-built fake server (stateless streamable HTTP), with a
 * handful of tools, not recording requests. Prints `listening <port>` when ready.
 */
import { FakeMcpServer } from '../support/fake-mcp-server';

const schema = { type: 'object', properties: { q: { type: 'string', description: 'what to look for' }, limit: { type: 'integer' } }, required: ['q'] };

async function main(): Promise<void> {
  const tools = Object.fromEntries(
    ['search', 'fetch', 'summarize', 'translate', 'lookup', 'list_pages', 'get_page', 'create_issue'].map((name) => [name, { description: `The ${name} tool of the benchmark upstream.`, inputSchema: schema }]),
  );
  const server = await FakeMcpServer.start({ tools, toolsOnly: true, record: false });
  process.stdout.write(`listening ${server.port}\n`);
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

void main();
