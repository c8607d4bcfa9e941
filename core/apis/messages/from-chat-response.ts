/**
 * The canonical chat response -> a Messages response, for a Messages client served by a non-Anthropic
 * model. The first choice is the answer (a Messages request cannot ask for several).
 */
import { UpstreamError } from '../../errors/gateway-error';
import type { ChatResponse, ToolCall } from '../../types/chat';
import { messagesId, toolUseId } from './message-id';
import { matchedStopSequence, stopReasonFromFinishReason } from './stop-reasons';
import { thinkingBlocksOfChat } from './thinking';
import { contentChunks } from '../../formats/content-chunks';
import type { MessagesContentBlock, MessagesResponse } from './types';
import { messagesUsageFromChatUsage } from './usage';

export function messagesResponseFromChat(response: ChatResponse, request?: { stop_sequences?: unknown }): MessagesResponse {
  const choice = response.choices?.[0];
  // reasoning comes first, as Anthropic models write it
  const content: MessagesContentBlock[] = [...thinkingBlocksOfChat(choice?.message)];
  const text = choice?.message?.content;
  if (typeof text === 'string' && text !== '') content.push({ type: 'text', text });
  else if (Array.isArray(text)) {
    for (const chunk of contentChunks(text)) content.push(chunk.kind === 'text' ? { type: 'text', text: chunk.text } : { type: 'thinking', thinking: chunk.text, signature: '' });
  }
  // an OpenAI refusal (structured output the model declined to write) comes as text with stop_reason
  // "refusal", Claude's own way of saying so, rather than an empty answer that looks finished
  const refusal = choice?.message?.refusal;
  const refused = typeof refusal === 'string' && refusal !== '';
  if (refused) content.push({ type: 'text', text: refusal });
  const cutShort = choice?.finish_reason === 'length';
  for (const call of choice?.message?.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: toolUseId(call.id, content.length), name: call.function.name, input: toolInput(call, cutShort) });
  }
  const calls = content.some((b) => b.type === 'tool_use');
  // an answer with tool calls waits for their results, whatever ended it: tool runners act on tool_use only
  const stopSequence = refused || calls ? undefined : matchedStopSequence(choice, request?.stop_sequences);
  return {
    id: messagesId(response.id),
    type: 'message',
    role: 'assistant',
    model: response.model,
    content,
    stop_reason: refused ? 'refusal' : stopSequence !== undefined ? 'stop_sequence' : stopReasonFromFinishReason(choice?.finish_reason, calls),
    stop_sequence: stopSequence ?? null,
    usage: messagesUsageFromChatUsage(response.usage),
  };
}

/**
 * Chat tool arguments are a JSON string; Messages wants the object. `cutShort`: the token limit ended the
 * answer, so the last call's arguments may stop mid-JSON.
 */
export function toolInput(call: ToolCall, cutShort = false): unknown {
  const args = call.function?.arguments;
  // some models send "" for a tool without parameters
  if (args === undefined || args === null || args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    // Anthropic answers such a call as an incomplete tool_use block with stop_reason max_tokens, which
    // tells the client to ask again with more tokens; an error would hide that (and invite a retry as is)
    if (cutShort) return {};
    throw new UpstreamError(`The model returned tool call "${call.function.name}" with arguments that are not valid JSON.`, 'invalid_tool_arguments');
  }
}
