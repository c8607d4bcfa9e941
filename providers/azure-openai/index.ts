import { definePlugin, withConfiguredHeaders, type HttpOperation, type Provider, type ProviderConfig, type ProviderTarget } from '../../core/plugins/sdk';
import { openAiUpstreamError } from '../openai/errors';
import { openAiOperations } from '../openai/operations';
import { azureStreamFrame, contentFilterError, filteredCompletion } from './content-filter';
import { CommandTokenSource } from './entra-token';
import { azurePath, takesMaxCompletionTokens, takesStreamOptions } from './paths';

/** Error codes Azure uses for its content filter (chat and completions, images). */
const FILTER_CODES = new Set(['content_filter', 'contentFilter', 'content_policy_violation', 'ResponsibleAIPolicyViolation']);

function checkConfig(config: ProviderConfig<string>): void {
  const auths = [config.apiKey, config.entraToken, config.entraTokenCommand].filter((v) => v !== undefined);
  if (auths.length !== 1) throw new Error('give exactly one of apiKey, entraToken or entraTokenCommand');
  if (config.baseUrl && /\/openai(\/v1)?\/*$/.test(config.baseUrl)) {
    throw new Error('baseUrl is the resource endpoint (https://RESOURCE.openai.azure.com), without /openai or /openai/v1');
  }
}

interface AzureInnerError {
  code?: unknown;
  content_filter_result?: unknown;
  content_filter_results?: unknown;
}

/** Auth errors and the content filter first; the rest as any OpenAI-compatible upstream's. */
function azureError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>) {
  const error = (body as { error?: { code?: unknown; innererror?: AzureInnerError; inner_error?: AzureInnerError } } | undefined)?.error;
  // chat names it `innererror.content_filter_result`, the images API `inner_error.content_filter_results`
  const inner = error?.innererror ?? error?.inner_error;
  if (status === 400 && (FILTER_CODES.has(String(error?.code)) || FILTER_CODES.has(String(inner?.code)))) {
    return contentFilterError('prompt', inner?.content_filter_result ?? inner?.content_filter_results);
  }
  return openAiUpstreamError(status, body, headers);
}

/**
 * Azure OpenAI: the OpenAI API on a resource endpoint, a deployment per model (`model` is the deployment
 * name), the v1 API or a dated `api-version`, `api-key` or Entra ID bearer auth. The translation is the
 * OpenAI one with Azure's paths, and its content-filter results turned into one clear error.
 */
function createAzureProvider(tokens: CommandTokenSource | undefined): Provider {
  const headersFor = (target: ProviderTarget): Record<string, string> => {
    const headers = withConfiguredHeaders({ 'content-type': 'application/json' }, target);
    if (target.provider.apiKey) headers['api-key'] = target.provider.apiKey;
    else if (target.provider.entraToken) headers.authorization = `Bearer ${target.provider.entraToken}`;
    return headers;
  };
  const openAi = openAiOperations({ headersFor, takesStreamOptions, takesMaxCompletionTokens });
  const onAzure = (op: HttpOperation): HttpOperation => ({
    ...op,
    toUpstream(request, target, inbound) {
      const upstream = op.toUpstream(request, target, inbound);
      return { ...upstream, path: azurePath(upstream.path, target) };
    },
  });
  const chat: HttpOperation = {
    ...onAzure(openAi.chat),
    fromUpstream(body) {
      const filtered = filteredCompletion(body);
      if (filtered) throw filtered;
      return body;
    },
    fromUpstreamEvent: azureStreamFrame,
  };
  return {
    operations: {
      chat,
      embeddings: onAzure(openAi.embeddings),
      'images.generations': onAzure(openAi['images.generations']),
      'images.edits': onAzure(openAi['images.edits']),
    },
    // a token from the operator's command is fetched (or reused) as the last step of every attempt
    prepareRequest: tokens
      ? async (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${await tokens.token()}` } })
      : undefined,
    toError(status, body, headers) {
      // one provider instance per entry: its command's token was refused, and the next attempt must not send it again
      if (status === 401) tokens?.drop();
      return azureError(status, body, headers);
    },
  };
}

export default definePlugin<'provider', Record<string, never>, Provider>({
  kind: 'provider',
  id: 'azure-openai',
  apiVersion: 1,
  optionsSchema: { type: 'object', additionalProperties: false, properties: {} },
  create(_options, deps, context) {
    const config = context?.provider;
    if (!config) throw new Error('azure-openai is created from a provider entry');
    checkConfig(config);
    const tokens = config.entraTokenCommand ? new CommandTokenSource(config.entraTokenCommand, deps.clock, deps.logger) : undefined;
    return createAzureProvider(tokens);
  },
});
