import { definePlugin, withConfiguredHeaders, type Provider, type ProviderConfig, type ProviderTarget } from '../../core/plugins/sdk';
import { openAiUpstreamError } from './errors';
import { openAiOperations } from './operations';
import { applyPreset, PRESETS, type Preset } from './presets';

interface OpenAiOptions {
  organization?: string;
  project?: string;
}

function upstreamHeaders(target: ProviderTarget, options: OpenAiOptions): Record<string, string> {
  const headers = withConfiguredHeaders({ 'content-type': 'application/json' }, target);
  if (target.provider.apiKey) headers.authorization = `Bearer ${target.provider.apiKey}`;
  if (options.organization) headers['openai-organization'] = options.organization;
  if (options.project) headers['openai-project'] = options.project;
  return headers;
}

/**
 * Whether a base URL is OpenAI's own API (the provider's default), not an OpenAI-compatible server. Asked
 * of every chat request that sends `max_tokens`, of base URLs from the config: each is parsed once (a WHATWG
 * URL parse was about half a kilobyte and a microsecond of every such request, issue 16). The table is
 * emptied if it ever grows past a thousand, as wire-url.ts does.
 */
export function isOpenAiApi(baseUrl: string): boolean {
  let known = openAiApi.get(baseUrl);
  if (known === undefined) {
    try {
      known = new URL(baseUrl).hostname === 'api.openai.com';
    } catch {
      known = false;
    }
    if (openAiApi.size >= 1_000) openAiApi.clear();
    openAiApi.set(baseUrl, known);
  }
  return known;
}

const openAiApi = new Map<string, boolean>();

function presetOf(config: ProviderConfig<string> | undefined): Preset | undefined {
  const name = config?.preset;
  if (name === undefined) return undefined;
  const preset = PRESETS.get(name);
  if (!preset) throw new Error(`unknown preset "${name}" (known: ${[...PRESETS.keys()].join(', ')})`);
  // a hosted vendor answers 401 to every request without a key: say so at boot instead
  if (!preset.local && !config?.apiKey) throw new Error(`preset "${name}" needs the provider's apiKey`);
  return preset;
}

/**
 * The OpenAI API and every OpenAI-compatible server (vLLM, Ollama, LM Studio, llama.cpp), by base URL or
 * by a vendor `preset` (presets.ts). The client's format is the upstream's: bodies pass through unchanged
 * except the model name and a preset's quirks; responses and stream frames are returned as the upstream
 * sent them.
 */
function createOpenAiProvider(options: OpenAiOptions, config: ProviderConfig<string> | undefined): Provider {
  const preset = presetOf(config);
  const operations = openAiOperations({
    headersFor: (target) => upstreamHeaders(target, options),
    chatBody: preset ? (body, target) => applyPreset(preset, body, target.model.model) : undefined,
    // OpenAI's own API, where every chat model takes it; an OpenAI-compatible server may not know it
    takesMaxCompletionTokens: preset ? undefined : (target) => isOpenAiApi(target.baseUrl),
  });
  return {
    defaultBaseUrl: preset?.baseUrl ?? 'https://api.openai.com/v1',
    operations,
    toError: openAiUpstreamError,
  };
}

export default definePlugin<'provider', OpenAiOptions, Provider>({
  kind: 'provider',
  id: 'openai',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { organization: { type: 'string', nullable: true }, project: { type: 'string', nullable: true } },
  } as never,
  create: (options, _deps, context) => createOpenAiProvider(options, context?.provider),
});
