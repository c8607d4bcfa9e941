import { InvalidRequestError, type ChatRequest, type ChatResponse, type ChatMessage } from '../../core/plugins/sdk';
import type { AcmeRequest, AcmeResponse } from './wire';

/** The text of a message's content: a string, or the text parts of a list (images are refused). */
function textOf(message: ChatMessage, i: number): string {
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return message.content
    .map((part, k) => {
      if (part.type === 'text') return String(part.text);
      throw new InvalidRequestError(`Acme models accept text only (messages[${i}].content[${k}] is ${part.type}).`, 'unsupported_content', { param: `messages[${i}].content[${k}]` });
    })
    .join('');
}

/** Canonical chat request -> Acme request. */
export function toAcme(request: ChatRequest, model: string, defaultMaxTokens: number): AcmeRequest {
  const system: string[] = [];
  const turns: AcmeRequest['turns'] = [];
  request.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m, i));
    else if (m.role === 'user') turns.push({ role: 'user', text: textOf(m, i) });
    else if (m.role === 'assistant') turns.push({ role: 'model', text: textOf(m, i) });
    else throw new InvalidRequestError(`Acme models do not support "${m.role}" messages.`, 'unsupported_message_role', { param: `messages[${i}].role` });
  });
  return {
    model,
    ...(system.length ? { system: system.join('\n') } : {}),
    turns,
    max_new_tokens: request.max_completion_tokens ?? request.max_tokens ?? defaultMaxTokens,
    ...(typeof request.temperature === 'number' ? { temperature: request.temperature } : {}),
    ...(request.stream ? { stream: true } : {}),
  };
}

export const finishReason = (stop: AcmeResponse['stop']) => (stop === 'length' ? 'length' : 'stop');

/** Acme response -> canonical chat completion. */
export function fromAcme(body: AcmeResponse, model: string, createdSeconds: number): ChatResponse {
  return {
    id: `chatcmpl-${body.id}`,
    object: 'chat.completion',
    created: createdSeconds,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: body.output.text }, finish_reason: finishReason(body.stop) }],
    usage: { prompt_tokens: body.usage.input_tokens, completion_tokens: body.usage.output_tokens, total_tokens: body.usage.input_tokens + body.usage.output_tokens },
  };
}
