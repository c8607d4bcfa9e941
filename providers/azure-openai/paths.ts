import type { ProviderTarget } from '../../core/plugins/sdk';

/** The `apiVersion` that selects the v1 API (`/openai/v1/...`, no api-version query): the default. */
export const V1 = 'v1';

/**
 * An OpenAI API path (`/chat/completions`) on Azure: under `/openai/v1` for the v1 API, where the
 * deployment name travels as the body's `model`; else under the deployment
 * (`/openai/deployments/{model}`) with the dated `api-version` query.
 */
export function azurePath(openAiPath: string, target: ProviderTarget): string {
  const version = target.provider.apiVersion ?? V1;
  if (version === V1) return `/openai/v1${openAiPath}`;
  return `/openai/deployments/${encodeURIComponent(target.model.model)}${openAiPath}?api-version=${encodeURIComponent(version)}`;
}
