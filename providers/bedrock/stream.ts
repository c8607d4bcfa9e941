/**
 * ConverseStream events -> `chat.completion.chunk` frames. The event-stream decoder (event-stream.ts)
 * hands each binary message over as a frame named by its event type, the JSON payload as data:
 *
 *   messageStart                  -> a role chunk
 *   contentBlockStart (toolUse)   -> a tool_calls chunk with id and name (arguments "")
 *   contentBlockDelta text        -> a content chunk
 *   contentBlockDelta toolUse     -> a tool_calls chunk with the next piece of the arguments
 *   messageStop                   -> a finish chunk (a failed generation with nothing said: the error)
 *   metadata                      -> the usage chunk, then `[DONE]`
 *   an exception message          -> throws the matching GatewayError (errors.ts)
 *   contentBlockStop              -> `{}` as the arguments of a tool call that streamed no input
 *   contentBlockDelta reasoning   -> text: reasoning_content; signature: a thinking_blocks entry with the
 *                                    block's whole text (as the anthropic provider streams Claude's);
 *                                    redactedContent: a thinking_blocks entry with the redacted block
 */
import { SseFrame, type ChatChunk, type ChatChunkChoice, type StreamState } from '../../core/plugins/sdk';
import { bedrockError } from './errors';
import { matchedStopSequence } from '../anthropic/translate';
import { chatUsageFromConverse, finishReasonFromConverse, silentFailure, stopSequenceOf } from './usage';

interface ConverseStreamState {
  id: string;
  model: string;
  created: number;
  /** Converse content block index -> chat tool call index */
  toolIndexByBlock: Map<number, number>;
  /** the tool blocks some of whose input came */
  blocksWithInput: Set<number>;
  stopped: boolean;
  done: boolean;
  /** whether any text or tool call was sent */
  said: boolean;
  /** the reasoning text so far, by Converse content block index */
  reasoningByBlock: Map<number, string>;
}

export function chatFramesFromConverseEvent(frame: SseFrame, scratch: StreamState, model: string, id: string, created: number): SseFrame[] {
  const state = scratch as unknown as ConverseStreamState;
  if (state.id === undefined) Object.assign(state, { id, model, created, toolIndexByBlock: new Map(), blocksWithInput: new Set(), stopped: false, done: false, said: false, reasoningByBlock: new Map() });
  const event = frame.json as Record<string, any>;
  switch (frame.event) {
    case 'messageStart':
      return [chunk(state, { role: 'assistant', content: '' })];
    case 'contentBlockStart': {
      const use = event?.start?.toolUse;
      if (!use) return [];
      const index = state.toolIndexByBlock.size;
      state.toolIndexByBlock.set(event.contentBlockIndex, index);
      state.said = true;
      return [chunk(state, { tool_calls: [{ index, id: use.toolUseId, type: 'function', function: { name: use.name, arguments: '' } }] })];
    }
    case 'contentBlockDelta': {
      const delta = event?.delta ?? {};
      if (typeof delta.text === 'string') {
        if (delta.text.trim() !== '') state.said = true;
        return delta.text ? [chunk(state, { content: delta.text })] : [];
      }
      if (delta.reasoningContent) return reasoningChunks(state, event.contentBlockIndex, delta.reasoningContent);
      if (delta.toolUse) {
        const index = state.toolIndexByBlock.get(event.contentBlockIndex);
        if (index === undefined || !delta.toolUse.input) return [];
        state.blocksWithInput.add(event.contentBlockIndex);
        return [chunk(state, { tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] })];
      }
      return [];
    }
    case 'messageStop': {
      const failed = silentFailure(event?.stopReason, state.said, true);
      if (failed) throw failed;
      state.stopped = true;
      return [chunk(state, {}, finishReasonFromConverse(event?.stopReason), matchedStopSequence(event?.stopReason, stopSequenceOf(event?.additionalModelResponseFields)))];
    }
    case 'metadata':
      state.done = true;
      return [SseFrame.fromJson({ ...base(state), choices: [], usage: chatUsageFromConverse(event?.usage) } satisfies ChatChunk), SseFrame.fromRaw('[DONE]')];
    case 'contentBlockStop': {
      // Converse streams no input for a tool called without arguments; chat clients parse the arguments,
      // and "" is not JSON: they get "{}", as in a JSON answer.
      const index = state.toolIndexByBlock.get(event?.contentBlockIndex);
      if (index === undefined || state.blocksWithInput.has(event.contentBlockIndex)) return [];
      return [chunk(state, { tool_calls: [{ index, function: { arguments: '{}' } }] })];
    }
    default:
      // exceptions arrive as frames named after their type (throttlingException, validationException, ...)
      if (frame.event?.endsWith('Exception')) throw bedrockError(undefined, event, {}, frame.event);
      return [];
  }
}

function reasoningChunks(state: ConverseStreamState, block: number, delta: { text?: unknown; signature?: unknown; redactedContent?: unknown }): SseFrame[] {
  if (typeof delta.text === 'string') {
    if (delta.text === '') return [];
    state.reasoningByBlock.set(block, (state.reasoningByBlock.get(block) ?? '') + delta.text);
    return [chunk(state, { reasoning_content: delta.text })];
  }
  // the whole block: the openai SDK's stream helpers keep only the last delta of a field they do not know,
  // and Claude checks the signature against the text
  if (typeof delta.signature === 'string' && delta.signature !== '') {
    return [chunk(state, { thinking_blocks: [{ type: 'thinking', thinking: state.reasoningByBlock.get(block) ?? '', signature: delta.signature }] })];
  }
  if (typeof delta.redactedContent === 'string') return [chunk(state, { thinking_blocks: [{ type: 'redacted_thinking', data: delta.redactedContent }] })];
  return [];
}

/** A stream that stopped but sent no metadata event still ends properly; one that never stopped stays cut. */
export function endOfConverseStream(scratch: StreamState): SseFrame[] {
  const state = scratch as unknown as ConverseStreamState;
  return state.stopped && !state.done ? [SseFrame.fromRaw('[DONE]')] : [];
}

function base(state: ConverseStreamState): { id: string; object: 'chat.completion.chunk'; created: number; model: string } {
  return { id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model };
}

function chunk(state: ConverseStreamState, delta: ChatChunkChoice['delta'], finishReason: string | null = null, extra: { stop_reason?: string } = {}): SseFrame {
  return SseFrame.fromJson({ ...base(state), choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null, ...extra }] } satisfies ChatChunk);
}
