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

/**
 * Whether the API version takes `stream_options` in a chat request: the v1 API and dated versions from
 * 2024-09-01-preview on (GA in 2024-10-21). Older ones (2024-06-01, 2024-02-01, ...) refuse it with
 * 400 "Unrecognized request argument supplied: stream_options". Dated versions compare as text.
 */
export function takesStreamOptions(target: ProviderTarget): boolean {
  const version = target.provider.apiVersion ?? V1;
  return version === V1 || version >= '2024-09-01';
}

/**
 * Whether the api-version takes `max_completion_tokens`, which came with the o1 models in the same
 * 2024-09-01-preview as `stream_options`; older ones refuse it ("Unrecognized request argument supplied"),
 * and the reasoning deployments refuse `max_tokens`.
 */
export function takesMaxCompletionTokens(target: ProviderTarget): boolean {
  return takesStreamOptions(target);
}
