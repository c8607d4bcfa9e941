/**
 * An MCP transport plugin for tests, loaded through the config's `plugins` list: the SDK's streamable-HTTP
 * client transport that also sends `x-transport: tagging-http` (and the `tag` option, if set), so a fake
 * upstream can tell which transport plugin carried each request.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { definePlugin, type McpTransportFactory } from '../../core/plugins/sdk';

export default definePlugin<'mcp-transport', { tag?: string }, McpTransportFactory>({
  kind: 'mcp-transport',
  id: 'tagging-http',
  apiVersion: 1,
  optionsSchema: { type: 'object', additionalProperties: false, properties: { tag: { type: 'string' } } },
  create: (options) => ({
    connect: (target) =>
      new StreamableHTTPClientTransport(new URL(target.url), {
        requestInit: { headers: { ...target.headers, 'x-transport': options.tag ?? 'tagging-http' } },
      }),
  }),
});
