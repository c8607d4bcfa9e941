/**
 * The demo setup `npm start` runs: no API keys, no database server. The built-in `echo` provider serves a
 * chat model (which calls a tool when asked: `call calc {"expr": "2+2"}`), an embedding model and an image
 * model (small generated PNGs); the built-in `demo` MCP server (tools `time`, `calc`, `lookup`) runs inside
 * the gateway process. The two keys below are for trying the gateway on your machine only: `sk-demo-admin`
 * opens the management API and the web console at /ui (set GATEWAY_ADMIN_KEY to use your own).
 * Add real providers with `env('OPENAI_API_KEY')` and the like (see README.md).
 */
import { defineConfig, env } from './core/config/define-config';

export default defineConfig({
  server: { host: '127.0.0.1', port: 4000 },
  store: { url: 'sqlite://./data/gateway.db' },
  adminKey: process.env.GATEWAY_ADMIN_KEY ? env('GATEWAY_ADMIN_KEY') : 'sk-demo-admin',
  organizations: [{ id: 'demo', name: 'Demo organization' }],
  keys: [{ key: 'sk-demo-key', org: 'demo', name: 'demo key' }],
  providers: [{ id: 'local-echo', type: 'echo' }],
  models: [
    { name: 'echo', provider: 'local-echo', price: { inputPerMTok: 0.1, outputPerMTok: 0.4 } },
    { name: 'echo-embed', provider: 'local-echo', kind: 'embedding', price: { inputPerMTok: 0.02 } },
    { name: 'echo-image', provider: 'local-echo', kind: 'image', price: { perImage: 0.01, perImageBySize: { '1024x1024': 0.02 } } },
  ],
  // served in process by the `mcp-demo` transport plugin (plugins/mcp-demo): the URL is never dialled
  mcpServers: [{ name: 'demo', url: 'http://demo.invalid/mcp', transport: 'mcp-demo', visibility: 'public', description: 'Demo tools: time, calc, lookup' }],
});
