/** The key and the model the bench's targets are called with (the essential-work proxy is given them too). */
export const BENCH_KEY = 'sk-bench-key';
export const BENCH_MODEL = 'bench-model';

/**
 * The gateway as the bench runs it: one organisation and key, one priced model on the fast upstream, and
 * the store given (SQLite in a temp dir as users run it, `memory://`, or the fleet store).
 */
export function benchGatewayConfig(upstreamUrl: string, store: { url: string; redis?: string }): object {
  return {
    store,
    organizations: [{ id: 'bench' }],
    keys: [{ key: BENCH_KEY, org: 'bench' }],
    providers: [{ id: 'up', type: 'openai', baseUrl: `${upstreamUrl}/v1`, apiKey: 'upstream-key' }],
    models: [{ name: BENCH_MODEL, provider: 'up', price: { inputPerMTok: 1, outputPerMTok: 2 } }],
  };
}
