/**
 * A Converse answer -> `chat.completion`. Pure: Converse answers carry no id, so the caller passes one
 * (and `created`). Reasoning blocks come back as the anthropic provider gives Claude's: `reasoning_content`
 * (their text) and `thinking_blocks` (signatures and redacted blocks included, so they can be passed back).
 */
import { reasoningText, type ChatResponse, type ThinkingBlock, type ToolCall } from '../../core/plugins/sdk';
import { matchedStopSequence } from '../anthropic/translate';
import { chatUsageFromConverse, finishReasonFromConverse, silentFailure, stopSequenceOf } from './usage';
import type { ConverseResponse } from './wire';

export function chatResponseFromConverse(body: ConverseResponse, model: string, id: string, created: number): ChatResponse {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const block of body.output?.message?.content ?? []) {
    if (typeof block.text === 'string') texts.push(block.text);
    else if (block.reasoningContent) {
      const { reasoningText: reasoned, redactedContent } = block.reasoningContent;
      if (typeof redactedContent === 'string') thinking.push({ type: 'redacted_thinking', data: redactedContent });
      else if (reasoned) thinking.push({ type: 'thinking', thinking: String(reasoned.text ?? ''), signature: String(reasoned.signature ?? '') });
    }
    else if (block.toolUse) toolCalls.push({ id: block.toolUse.toolUseId, type: 'function', function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
  }
  const failed = silentFailure(body.stopReason, texts.some((t) => t.trim() !== '') || toolCalls.length > 0, false);
  if (failed) throw failed;
  const message: ChatResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking.length > 0) {
    message.reasoning_content = reasoningText(thinking) ?? '';
    message.thinking_blocks = thinking;
  }
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, finish_reason: finishReasonFromConverse(body.stopReason), logprobs: null, ...matchedStopSequence(body.stopReason, stopSequenceOf(body.additionalModelResponseFields)) }],
    usage: chatUsageFromConverse(body.usage),
  };
}
