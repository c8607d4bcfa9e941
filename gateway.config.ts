/**
 * The demo setup `npm start` runs: no API keys, no database server. The built-in `echo` provider serves a
 * chat model, an embedding model and an image model (small generated PNGs); the demo key below is for
 * trying the gateway on your machine only.
 * Add real providers with `env('OPENAI_API_KEY')` and the like (see README.md).
 */
import { defineConfig, env } from './core/config/define-config';

export default defineConfig({
  server: { host: '127.0.0.1', port: 4000 },
  store: { url: 'sqlite://./data/gateway.db' },
  ...(process.env.GATEWAY_ADMIN_KEY ? { adminKey: env('GATEWAY_ADMIN_KEY') } : {}),
  organizations: [{ id: 'demo', name: 'Demo organization' }],
  keys: [{ key: 'sk-demo-key', org: 'demo', name: 'demo key' }],
  providers: [{ id: 'local-echo', type: 'echo' }],
  models: [
    { name: 'echo', provider: 'local-echo', price: { inputPerMTok: 0.1, outputPerMTok: 0.4 } },
    { name: 'echo-embed', provider: 'local-echo', kind: 'embedding', price: { inputPerMTok: 0.02 } },
    { name: 'echo-image', provider: 'local-echo', kind: 'image', price: { perImage: 0.01, perImageBySize: { '1024x1024': 0.02 } } },
  ],
});
