import { defineConfig, env } from 'model-gateway';

export default defineConfig({
  organizations: [{ id: 'acme' }],
  keys: [{ key: env('ACME_KEY'), org: 'acme' }],
  mcpServers: [
    { name: 'docs', url: 'https://docs.internal/mcp', org: 'acme',            // private to acme
      auth: { type: 'bearer', token: env('DOCS_TOKEN') }, forwardHeaders: ['authorization'],
      allowedTools: ['search', 'fetch'], pricePerCall: 0.001, toolPrices: { search: 0.002 } },
    { name: 'weather', url: 'https://weather.example/mcp', visibility: 'public' },
  ],
  mcp: { healthCheckIntervalSeconds: 60, discoveryTimeoutSeconds: 30, maxCallSeconds: 3600, allowPrivateUpstreams: false },
});
