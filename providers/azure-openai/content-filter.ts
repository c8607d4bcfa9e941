import { GatewayError, SseFrame } from '../../core/plugins/sdk';

/**
 * Azure OpenAI's content filter, surfaced as one clear error: a 400 `content_filter` (the API's
 * `invalid_request_error`) naming the categories that tripped, whether Azure blocked the prompt (a 400
 * with code `content_filter`) or cut the completion (finish_reason `content_filter`).
 */
export function contentFilterError(where: 'prompt' | 'completion', results: unknown): GatewayError {
  const tripped = trippedCategories(results);
  const which = tripped.length ? ` (${tripped.join(', ')})` : '';
  const what = where === 'prompt' ? 'the prompt' : 'the completion';
  return new GatewayError(400, 'invalid_request_error', 'content_filter', `Azure OpenAI's content filter blocked ${what}${which}.`);
}

/** "hate: medium", "jailbreak" for each filtered category of Azure's content_filter_result(s). */
export function trippedCategories(results: unknown): string[] {
  const out: string[] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach((v) => visit((v as { content_filter_results?: unknown })?.content_filter_results ?? v));
    if (typeof value !== 'object' || value === null) return;
    for (const [category, verdict] of Object.entries(value)) {
      if (typeof verdict !== 'object' || verdict === null || (verdict as { filtered?: unknown }).filtered !== true) continue;
      const severity = (verdict as { severity?: unknown }).severity;
      const label = typeof severity === 'string' && severity !== 'safe' ? `${category}: ${severity}` : category;
      if (!out.includes(label)) out.push(label);
    }
  };
  visit(results);
  return out;
}

interface AzureChoice {
  finish_reason?: string | null;
  content_filter_results?: unknown;
}

/** A completion Azure filtered (any choice ended by the filter) -> the error; else undefined. */
export function filteredCompletion(body: unknown): GatewayError | undefined {
  const choices = (body as { choices?: AzureChoice[] } | undefined)?.choices;
  if (!Array.isArray(choices)) return undefined;
  const filtered = choices.filter((c) => c?.finish_reason === 'content_filter');
  return filtered.length ? contentFilterError('completion', filtered.map((c) => c.content_filter_results ?? {})) : undefined;
}

/**
 * One Azure stream frame as a client of the OpenAI API expects it: the frame Azure sends first with
 * only `prompt_filter_results` (empty `choices`, empty `id` and `model`) is dropped, and a choice the
 * filter ended becomes the content-filter error (an error event once the stream has started).
 */
export function azureStreamFrame(frame: SseFrame): SseFrame | null {
  if (frame.isDone || !frame.mentions('filter_result')) return frame;
  const chunk = frame.json as { choices?: AzureChoice[]; usage?: unknown; prompt_filter_results?: unknown };
  if (Array.isArray(chunk?.choices) && chunk.choices.length === 0 && !chunk.usage) return null;
  const error = filteredCompletion(chunk);
  if (error) throw error;
  return frame;
}
