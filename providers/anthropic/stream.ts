/**
 * Anthropic Messages stream events -> `chat.completion.chunk` frames, one upstream event at a time.
 *
 *   message_start              -> a role chunk (id, model and prompt usage remembered)
 *   content_block_start text   -> a content chunk if the block starts with text
 *   content_block_start tool   -> a tool_calls chunk with id and name (arguments "")
 *   content_block_delta        -> text_delta: content; input_json_delta: tool call arguments;
 *                                 thinking_delta: reasoning_content; signature_delta: a thinking_blocks
 *                                 entry with the block's whole text and signature (so a chat client can
 *                                 pass the block back, even one that keeps only a field's last delta)
 *   content_block_start redacted_thinking -> a thinking_blocks entry with the block
 *   message_delta              -> a finish chunk (a stop sequence named as its `stop_reason`), then a
 *                                 usage chunk with `choices: []`
 *   message_stop               -> `[DONE]`
 *   content_block_stop tool    -> `{}` as the arguments of a tool call that got none
 *   ping, other content_block_stop -> nothing
 *   error                      -> throws the matching GatewayError
 */
import { finishReasonFromStopReason, chatUsageFromMessagesUsage, SseFrame, type Clock, type StreamState, type MessagesUsage, type ChatChunk, type ChatChunkChoice } from '../../core/plugins/sdk';
import { anthropicError } from './errors';
import { matchedStopSequence } from './translate';

interface ChunkState {
  id: string;
  model: string;
  created: number;
  /** the chat tool-call index of each tool_use block, by the upstream's block index (a Map: that index is the upstream's value) */
  toolIndexByBlock: Map<unknown, number>;
  /** the text of each thinking block so far, by the upstream's block index */
  thinkingByBlock: Map<unknown, string>;
  /** upstream block indexes of tool_use blocks that have had input JSON */
  blocksWithInput: Set<unknown>;
  nextToolIndex: number;
  usage: Partial<MessagesUsage>;
}

export function chatFramesFromMessagesEvent(frame: SseFrame, scratch: StreamState, clock: Clock): SseFrame[] {
  const event = frame.json as { type?: string; [key: string]: any };
  const state = scratch as unknown as ChunkState;
  switch (event?.type) {
    case 'message_start': {
      const message = event.message ?? {};
      state.id = message.id ?? '';
      state.model = message.model ?? '';
      state.created = Math.floor(clock.now() / 1000);
      state.toolIndexByBlock = new Map();
      state.blocksWithInput = new Set();
      state.thinkingByBlock = new Map();
      state.nextToolIndex = 0;
      state.usage = { ...(message.usage ?? {}) };
      return [chunk(state, { role: 'assistant', content: '' })];
    }
    case 'content_block_start': {
      const block = event.content_block ?? {};
      if (block.type === 'text') return block.text ? [chunk(state, { content: block.text })] : [];
      if (block.type === 'thinking') {
        state.thinkingByBlock.set(event.index, String(block.thinking ?? ''));
        return block.thinking ? [chunk(state, { reasoning_content: block.thinking })] : [];
      }
      if (block.type === 'redacted_thinking') return [chunk(state, { thinking_blocks: [{ type: 'redacted_thinking', data: String(block.data ?? '') }] })];
      if (block.type === 'tool_use') {
        const index = state.nextToolIndex++;
        state.toolIndexByBlock.set(event.index, index);
        return [chunk(state, { tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] })];
      }
      return [];
    }
    case 'content_block_delta': {
      const delta = event.delta ?? {};
      if (delta.type === 'text_delta') return delta.text ? [chunk(state, { content: delta.text })] : [];
      if (delta.type === 'thinking_delta') {
        if (!delta.thinking) return [];
        state.thinkingByBlock.set(event.index, (state.thinkingByBlock.get(event.index) ?? '') + delta.thinking);
        return [chunk(state, { reasoning_content: delta.thinking })];
      }
      if (delta.type === 'signature_delta') {
        if (!delta.signature) return [];
        // the whole block: the openai SDK's stream helpers keep only the last delta of a field they do not
        // know, and Anthropic checks the signature against the text
        const thinking = state.thinkingByBlock.get(event.index) ?? '';
        return [chunk(state, { thinking_blocks: [{ type: 'thinking', thinking, signature: delta.signature }] })];
      }
      if (delta.type === 'input_json_delta') {
        const index = state.toolIndexByBlock.get(event.index);
        if (index === undefined || !delta.partial_json) return [];
        state.blocksWithInput.add(event.index);
        return [chunk(state, { tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
      }
      return [];
    }
    case 'content_block_stop': {
      // A tool without input streams no JSON (or one empty delta); chat clients parse the arguments, and
      // "" is not JSON: they get "{}", as in a JSON answer.
      const index = state.toolIndexByBlock.get(event.index);
      if (index === undefined || state.blocksWithInput.has(event.index)) return [];
      return [chunk(state, { tool_calls: [{ index, function: { arguments: '{}' } }] })];
    }
    case 'message_delta': {
      const out: SseFrame[] = [];
      const stopReason = event.delta?.stop_reason;
      if (stopReason) out.push(chunk(state, {}, finishReasonFromStopReason(stopReason), matchedStopSequence(stopReason, event.delta?.stop_sequence)));
      // message_delta usage counters are cumulative; a field it leaves out keeps its message_start value
      // keys are the upstream's: define, never assign, so a `__proto__` key cannot replace the prototype
      for (const [key, value] of Object.entries(event.usage ?? {})) if (value != null) Object.defineProperty(state.usage, key, { value, writable: true, enumerable: true, configurable: true });
      out.push(SseFrame.fromJson({ ...base(state), choices: [], usage: chatUsageFromMessagesUsage(state.usage) } satisfies ChatChunk));
      return out;
    }
    case 'message_stop':
      return [SseFrame.fromRaw('[DONE]')];
    case 'error':
      throw anthropicError(undefined, event);
    default:
      // ping, and event types added after this was written
      return [];
  }
}

function base(state: ChunkState): { id: string; object: 'chat.completion.chunk'; created: number; model: string } {
  return { id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model };
}

function chunk(state: ChunkState, delta: ChatChunkChoice['delta'], finishReason: string | null = null, extra: { stop_reason?: string } = {}): SseFrame {
  return SseFrame.fromJson({ ...base(state), choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null, ...extra }] } satisfies ChatChunk);
}
