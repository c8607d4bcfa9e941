import { FakeOpenAI, type RecordedRequest, type Script } from '../../support/fake-openai';

export const AZURE_KEY = 'azure-key-CANARY-5150';
export const API_VERSION = '2024-10-21';
/** a GA api-version older than `stream_options`, which it refuses as Azure does */
export const OLD_API_VERSION = '2024-06-01';

/**
 * A fake Azure OpenAI resource: the OpenAI wire format on Azure's paths, refusing (as Azure does) a
 * request without the exact `api-key` (401) and a deployment path without the exact `api-version` (404).
 * The Entra ID bearer tokens in `bearers` are accepted too. `reply` scripts what an accepted request gets.
 */
export class FakeAzure extends FakeOpenAI {
  reply: (req: RecordedRequest) => Script = () => ({ kind: 'json', body: {} });
  bearers: string[] = [];

  constructor() {
    super();
    this.script = (req) => {
      const url = new URL(req.path, 'http://azure.test');
      const authorized = req.headers['api-key'] === AZURE_KEY || this.bearers.some((token) => req.headers.authorization === `Bearer ${token}`);
      if (!authorized) {
        return { kind: 'json', status: 401, body: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } };
      }
      const onDeployment = url.pathname.startsWith('/openai/deployments/');
      const onV1 = url.pathname.startsWith('/openai/v1/');
      const version = url.searchParams.get('api-version');
      if ((onDeployment && version !== API_VERSION && version !== OLD_API_VERSION) || (onV1 && url.search !== '') || (!onDeployment && !onV1)) {
        return { kind: 'json', status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
      }
      const body = req.body as { stream_options?: unknown; max_tokens?: unknown; max_completion_tokens?: unknown } | undefined;
      if (version === OLD_API_VERSION && body?.stream_options !== undefined) {
        return { kind: 'json', status: 400, body: { error: { code: null, message: 'Unrecognized request argument supplied: stream_options', param: null, type: 'invalid_request_error' } } };
      }
      if (version === OLD_API_VERSION && body?.max_completion_tokens !== undefined) {
        return { kind: 'json', status: 400, body: { error: { code: null, message: 'Unrecognized request argument supplied: max_completion_tokens', param: null, type: 'invalid_request_error' } } };
      }
      // a reasoning deployment (o-series) takes only the newer cap, as Azure's do
      if (url.pathname.startsWith('/openai/deployments/o') && body?.max_tokens !== undefined) {
        const message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
        return { kind: 'json', status: 400, body: { error: { code: 'unsupported_parameter', message, param: 'max_tokens', type: 'invalid_request_error' } } };
      }
      return this.reply(req);
    };
  }
}

const base = { id: 'chatcmpl-az', created: 1700000000, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_az' };
const noFilter = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

/** Azure's chat completion: the OpenAI shape plus its filter results. */
export function azureCompletion(message: object, finishReason: string, usage: object, choiceExtra: object = {}) {
  return {
    ...base,
    object: 'chat.completion',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: noFilter }],
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason: finishReason, content_filter_results: noFilter, ...choiceExtra }],
    usage,
  };
}

/** Azure's stream: first a frame with only the prompt's filter results (empty id, model and choices). */
export function azureChunks(deltas: object[], finishReason: string, usage: object): object[] {
  const chunk = (delta: object, finish: string | null = null) => ({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, content_filter_results: finish ? {} : noFilter }] });
  return [
    { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: noFilter }] },
    ...deltas.map((d) => chunk(d)),
    chunk({}, finishReason),
    { ...base, object: 'chat.completion.chunk', choices: [], usage },
  ];
}

export const filteredResults = { hate: { filtered: true, severity: 'medium' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
