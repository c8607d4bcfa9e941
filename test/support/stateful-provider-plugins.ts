/**
 * Two provider plugins of different vendors, in one module, that keep their upstream token in the plugin
 * store (as a plugin caching a token from its vendor's token endpoint does), under the same key: each
 * plugin's store is its own, so each vendor must get its own token. The token is the plugin's `token`
 * option, stored on the first request and read from the store on every later one.
 */
import { definePlugin, UpstreamError, type ChatRequest, type Provider } from '../../core/plugins/sdk';

function tokenKeepingProvider(id: string) {
  return definePlugin<'provider', { token: string }, Provider>({
    kind: 'provider',
    id,
    apiVersion: 1,
    optionsSchema: { type: 'object', additionalProperties: false, required: ['token'], properties: { token: { type: 'string' } } },
    create(options, deps) {
      return {
        operations: {
          chat: {
            toUpstream: (request: ChatRequest, target) => ({ path: '/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, model: target.model.model }) }),
            fromUpstream: (body) => body,
          },
        },
        async prepareRequest(request) {
          let token = await deps.store.get<string>('token');
          if (token === undefined) {
            token = options.token;
            await deps.store.set('token', token);
          }
          return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
        },
        toError: (status) => new UpstreamError(`The ${id} upstream failed (HTTP ${status}).`),
      };
    },
  });
}

export default [tokenKeepingProvider('vendor-a'), tokenKeepingProvider('vendor-b')];
