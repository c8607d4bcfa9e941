import { defineConfig, env } from 'model-gateway';

export default defineConfig({
  server: { host: '0.0.0.0', port: 4000 },
  store: { url: 'sqlite://./data/gateway.db' },      // or 'memory://', 'redis://127.0.0.1:6379'
  adminKey: env('GATEWAY_ADMIN_KEY'),                 // the platform admin: management API only
  organizations: [{ id: 'acme', name: 'Acme Corp' }],
  keys: [{
    key: env('ACME_KEY'), org: 'acme', name: 'ci-bot',
    models: ['gpt-4o-mini', 'claude-*'],              // absent = every model; `*` is a wildcard
    mcp: { servers: ['docs'], tools: { docs: ['search'] } },   // servers defined below, in mcpServers
    maxBudget: 25, rpm: 600, tpm: 200000,
  }],
  providers: [
    { id: 'openai-main', type: 'openai', apiKey: env('OPENAI_API_KEY') },   // baseUrl defaults to https://api.openai.com/v1
    { id: 'local-vllm', type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1' }, // any OpenAI-compatible server
    { id: 'claude', type: 'anthropic', apiKey: env('ANTHROPIC_API_KEY') },
  ],
  models: [
    { name: 'gpt-4o-mini', provider: 'openai-main', price: { inputPerMTok: 0.15, outputPerMTok: 0.6 } },
    // several entries with one name form a load-balanced group, picked by weight
    { name: 'llama', provider: 'local-vllm', model: 'meta-llama/Llama-3.1-8B-Instruct', weight: 3 },
    { name: 'claude-sonnet', provider: 'claude', model: 'claude-sonnet-4-5', price: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 } },
    { name: 'text-embedding-3-small', provider: 'openai-main', kind: 'embedding', price: { inputPerMTok: 0.02 } },
  ],
  mcpServers: [{ name: 'docs', url: 'https://docs.internal/mcp', org: 'acme' }],   // see "MCP gateway"
});
