/**
 * Stop reasons between the Messages format and the canonical chat format. Both directions live here so
 * the provider (Anthropic upstream -> chat) and the endpoint adapter (chat -> Messages client) agree.
 */
import { ownValue } from '../../lookup/own-keys';
import type { MessagesStopReason } from './types';

const FINISH_BY_STOP_REASON: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // the model paused a long server-tool turn; to a chat client the turn is over
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

const STOP_REASON_BY_FINISH: Record<string, MessagesStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** Anthropic stop_reason -> chat finish_reason (unknown reasons read as a normal stop). */
export function finishReasonFromStopReason(stopReason: string | null | undefined): string | null {
  if (stopReason === null || stopReason === undefined) return null;
  return ownValue(FINISH_BY_STOP_REASON, stopReason) ?? 'stop';
}

/**
 * chat finish_reason -> Anthropic stop_reason (unknown or missing reasons read as end_turn). An answer
 * holding tool calls that "stopped" is waiting for their results: OpenAI finishes a call forced by a
 * named tool_choice with "stop" (some compatible servers every call), and Anthropic clients, the SDK's
 * tool runner among them, run tools only on `tool_use`.
 */
export function stopReasonFromFinishReason(finishReason: string | null | undefined, hasToolCalls = false): MessagesStopReason {
  const reason = (finishReason && ownValue(STOP_REASON_BY_FINISH, finishReason)) || 'end_turn';
  return reason === 'end_turn' && hasToolCalls ? 'tool_use' : reason;
}

/**
 * The client's stop sequence that ended a chat answer, when the upstream says which: vLLM's choice carries
 * `stop_reason`, the stop string it matched (a stop token's id, or null at the end of a turn, otherwise).
 * OpenAI's own API names none, and its answers read as end_turn.
 */
export function matchedStopSequence(choice: unknown, stopSequences: unknown): string | undefined {
  const matched = (choice as { finish_reason?: unknown; stop_reason?: unknown } | null | undefined) ?? {};
  if (matched.finish_reason !== 'stop' || typeof matched.stop_reason !== 'string') return undefined;
  return Array.isArray(stopSequences) && stopSequences.includes(matched.stop_reason) ? matched.stop_reason : undefined;
}
