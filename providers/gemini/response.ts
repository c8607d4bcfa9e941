/**
 * A Gemini `generateContent` answer -> `chat.completion`. Pure; `created` is injected.
 * Each candidate is a choice. Text parts are joined; thought summaries (`thought: true`) are left out;
 * function calls become tool calls with arguments as a JSON string. A blocked prompt, or a candidate
 * stopped by a safety filter or a failed generation (a malformed function call) before it said anything,
 * is an error (finish.ts), not an empty answer.
 */
import type { ChatChoice, ChatResponse, ToolCall } from '../../core/plugins/sdk';
import { finishReasonFromGemini, promptBlockedError, silentStopError } from './finish';
import { baseCallId, toolCallId } from './tool-ids';
import { chatUsageFromGemini } from './usage';
import type { GeminiCandidate, GeminiResponse } from './wire';

export function chatResponseFromGemini(body: GeminiResponse, model: string, created: number): ChatResponse {
  const blocked = promptBlockedError(body);
  if (blocked) throw blocked;
  const candidates = body.candidates ?? [];
  const only = candidates.length === 1 ? candidates[0] : undefined;
  const silent = only && silentStopError(only);
  if (silent) throw silent;

  return {
    id: chatId(body.responseId),
    object: 'chat.completion',
    created,
    model: body.modelVersion ?? model,
    choices: candidates.map((candidate, i) => choiceOf(candidate, i, body.responseId)),
    usage: chatUsageFromGemini(body.usageMetadata),
  };
}

export function chatId(responseId: string | undefined): string {
  return `chatcmpl-${responseId ?? 'gemini'}`;
}

function choiceOf(candidate: GeminiCandidate, position: number, responseId: string | undefined): ChatChoice {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.thought) continue;
    if (typeof part.text === 'string') texts.push(part.text);
    else if (part.functionCall) {
      const id = toolCallId(baseCallId(part.functionCall.id, responseId, toolCalls.length), part.thoughtSignature);
      toolCalls.push({ id, type: 'function', function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) } });
    }
  }
  const message: ChatChoice['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: candidate.index ?? position,
    message,
    finish_reason: finishReasonFromGemini(candidate.finishReason, toolCalls.length > 0) ?? 'stop',
    logprobs: null,
  };
}
