import { defineConfig, env } from 'model-gateway';

export default defineConfig({
  adminKey: env('GATEWAY_ADMIN_KEY'),
  // Prometheus scrapes with this token (or the admin key); `public: true` would open /metrics to anyone
  metrics: { token: env('METRICS_TOKEN') },
  organizations: [{ id: 'acme' }],
  providers: [{ id: 'openai-main', type: 'openai', apiKey: env('OPENAI_API_KEY') }],
  models: [{ name: 'gpt-4o-mini', provider: 'openai-main', price: { inputPerMTok: 0.15, outputPerMTok: 0.6 } }],
  keys: [{ key: env('CI_KEY'), org: 'acme', name: 'ci-bot' }],
});
