import { defineConfig, env } from 'model-gateway';

export default defineConfig({
  organizations: [{ id: 'acme' }],
  providers: [{ id: 'openai-main', type: 'openai', apiKey: env('OPENAI_API_KEY') }],
  models: [{ name: 'gpt-4o-mini', provider: 'openai-main' }],
  guardrails: [
    { id: 'mask-pii', engine: 'pii-mask', default: true },                       // every key, both phases, chat and mcp
    { id: 'no-secrets', engine: 'pii-mask', phase: 'pre', options: { entities: ['SECRET'], actions: { SECRET: 'block' } } },
    { id: 'house-rules', engine: 'block', phase: 'post', on: ['chat'], onError: 'allow',
      options: { patterns: ['internal\\s+use\\s+only'], words: ['project falcon'] } },
    { id: 'watch', engine: 'block', mode: 'audit', default: true, options: { words: ['competitor'] } },
  ],
  keys: [{ key: env('CI_KEY'), org: 'acme', guardrails: ['no-secrets', 'house-rules'] }],
});
