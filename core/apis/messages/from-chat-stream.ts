/**
 * Canonical `chat.completion.chunk` frames -> the Anthropic Messages event sequence:
 *
 *   message_start, ping,
 *   (content_block_start, content_block_delta*, content_block_stop)*   thinking, text or tool_use blocks
 *   message_delta (stop_reason + usage), message_stop
 *
 * Chat streams report usage in a last chunk after the finish chunk, so `message_delta` is held back
 * until that chunk or `[DONE]` arrives. `message_start` carries an estimate of the prompt's tokens
 * (clients such as LangChain read the input count only there); the frame is marked so the meter does
 * not take the estimate for the upstream's count, which `message_delta` restates.
 *
 * Reasoning (`reasoning_content`, or `reasoning` on some servers) becomes a thinking block; a signature
 * the upstream sends in `thinking_blocks` becomes its `signature_delta`. OpenAI's `refusal` text is
 * streamed as text and the message stops with `refusal`. Only choice 0 is read (a Messages request has one answer).
 * One translator per stream; it is not reusable.
 */
import { UpstreamError } from '../../errors/gateway-error';
import { scrubMessage } from '../../errors/scrub';
import { SseFrame } from '../../streaming/sse-frame';
import type { ChatChunk, ChunkToolCall, ThinkingBlock, Usage } from '../../types/chat';
import { messagesId, toolUseId } from './message-id';
import { matchedStopSequence, stopReasonFromFinishReason } from './stop-reasons';
import type { MessagesStopReason } from './types';
import { contentChunks } from '../../formats/content-chunks';
import { messagesUsageFromChatUsage } from './usage';
import { tokensOfChars } from '../../spend/usage-estimate';

type OpenBlock = { kind: 'text'; index: number } | { kind: 'thinking'; index: number } | { kind: 'tool'; index: number };

export interface MessagesStreamOptions {
  /** the model name to report in message_start (default: the chunk's model) */
  model?: string;
  /** the prompt's estimated size, reported in message_start until the upstream's count arrives */
  estimatedInputTokens?: number;
  /** the request's `stop_sequences`, to name the one an upstream says it matched */
  stopSequences?: unknown;
}

export class MessagesStreamTranslator {
  private started = false;
  private finished = false;
  private nextBlockIndex = 0;
  private open: OpenBlock | undefined;
  /** chat tool-call index -> the Messages block index it was given, and the call's id */
  private readonly toolBlocks = new Map<number, { index: number; id: string | undefined }>();
  /**
   * Calls that began while another call's block was open, in order, with their chat tool-call index: some
   * OpenAI-compatible servers stream parallel calls' arguments interleaved, and a Messages block cannot be
   * reopened, so these are gathered and follow, each whole, once the open block ends.
   */
  private readonly heldCalls: { toolIndex: number; id: string | undefined; name: string; args: string }[] = [];
  /**
   * Text that came while a call's block was open: some servers (vLLM's tool parsers) send text in the middle
   * of a call, and closing the call's block for it would lose the arguments still to come. It follows,
   * as a block of its own, once the call's block ends.
   */
  private heldText = '';
  /**
   * Reasoning that came while a call's block was open (interleaved thinking between a call's argument
   * deltas): closing the call's block for it would lose the arguments still to come. The blocks follow,
   * in order, once the call's block ends, ahead of the held calls and text.
   */
  private readonly heldThinking: ThinkingBlock[] = [];
  private stopReason: MessagesStopReason | undefined;
  private stopSequence: string | null = null;
  /** the upstream sent refusal text (OpenAI's `delta.refusal`): the message stops as a refusal */
  private refused = false;
  private usage: Usage | undefined;
  /** characters of text, thinking and tool input sent, for an upstream that never reports its usage */
  private generatedChars = 0;

  constructor(private readonly options: MessagesStreamOptions = {}) {}

  /** One upstream chat frame in, the Messages frames it produces out. */
  push(frame: SseFrame): SseFrame[] {
    if (this.finished) return [];
    if (frame.isDone) return this.close();
    const chunk = frame.json as ChatChunk;
    // OpenAI-compatible servers report a failure mid-stream as a data chunk with `error` (vLLM then
    // sends [DONE]): the answer is incomplete, and must not close as a finished message
    const failure = (chunk as { error?: unknown })?.error;
    if (typeof failure === 'object' && failure !== null) throw midStreamError(failure);
    const out: SseFrame[] = [];
    if (!this.started) this.start(chunk, out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0 || c.index === undefined);
    if (!choice) return out;
    const delta = choice.delta ?? {};
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (reasoning !== '') this.thinking(reasoning, out);
    if (Array.isArray(delta.thinking_blocks)) for (const block of delta.thinking_blocks) this.thinkingBlock(block, out);
    if (typeof delta.content === 'string' && delta.content !== '') this.text(delta.content, out);
    else if (Array.isArray(delta.content)) {
      for (const chunk of contentChunks(delta.content)) {
        if (chunk.kind === 'text') this.text(chunk.text, out);
        else this.thinking(chunk.text, out);
      }
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      this.refused = true;
      this.text(delta.refusal, out);
    }
    for (const call of delta.tool_calls ?? []) this.toolCall(call, out);
    if (choice.finish_reason) {
      // an answer with tool calls waits for their results, whatever ended it: tool runners act on tool_use only
      const matched = this.refused || this.toolBlocks.size > 0 ? undefined : matchedStopSequence(choice, this.options.stopSequences);
      this.stopSequence = matched ?? null;
      this.stopReason = this.refused ? 'refusal' : matched !== undefined ? 'stop_sequence' : stopReasonFromFinishReason(choice.finish_reason, this.toolBlocks.size > 0);
      this.closeBlock(out);
    }
    return out;
  }

  /**
   * The upstream body ended. A stream that reached its finish chunk but not `[DONE]` is closed
   * normally; one cut before any finish yields nothing, so the caller can report the error.
   */
  end(): SseFrame[] {
    if (this.finished || this.stopReason === undefined) return [];
    return this.close();
  }

  private start(chunk: Partial<ChatChunk>, out: SseFrame[]): void {
    this.started = true;
    const start = event({
      type: 'message_start',
      message: {
        id: messagesId(chunk.id),
          type: 'message',
          role: 'assistant',
        model: this.options.model ?? chunk.model ?? '',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // the prompt size of a chat stream is known only at its end: message_delta restates it
        usage: { input_tokens: this.options.estimatedInputTokens ?? 0, output_tokens: 0 },
      },
    });
    start.usageEstimated = true;
    out.push(start, event({ type: 'ping' }));
  }

  private thinking(text: string, out: SseFrame[]): void {
    if (this.open?.kind === 'tool') {
      const last = this.heldThinking.at(-1);
      // a signed block is finished: more reasoning is a block of its own
      if (last?.type === 'thinking' && !last.signature) last.thinking += text;
      else this.heldThinking.push({ type: 'thinking', thinking: text });
      return;
    }
    if (this.open?.kind !== 'thinking') {
      this.closeBlock(out);
      this.open = { kind: 'thinking', index: this.nextBlockIndex++ };
      out.push(event({ type: 'content_block_start', index: this.open.index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    }
    this.generatedChars += text.length;
    out.push(event({ type: 'content_block_delta', index: this.open.index, delta: { type: 'thinking_delta', thinking: text } }));
  }

  /** A signature closes the thinking block it signs; a redacted block is a block of its own. */
  private thinkingBlock(block: ThinkingBlock, out: SseFrame[]): void {
    if (this.open?.kind === 'tool') {
      const last = this.heldThinking.at(-1);
      if (block?.type === 'thinking' && typeof block.signature === 'string' && block.signature !== '') {
        if (last?.type === 'thinking' && !last.signature) last.signature = block.signature;
        else this.heldThinking.push({ type: 'thinking', thinking: '', signature: block.signature });
      } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') this.heldThinking.push({ type: 'redacted_thinking', data: block.data });
      return;
    }
    if (block?.type === 'thinking' && typeof block.signature === 'string' && block.signature !== '') {
      if (this.open?.kind !== 'thinking') this.thinking('', out);
      out.push(event({ type: 'content_block_delta', index: this.open!.index, delta: { type: 'signature_delta', signature: block.signature } }));
      this.closeBlock(out);
    } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
      this.closeBlock(out);
      const index = this.nextBlockIndex++;
      out.push(
        event({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: block.data } }),
        event({ type: 'content_block_stop', index }),
      );
    }
  }

  private text(text: string, out: SseFrame[]): void {
    if (this.open?.kind === 'tool') {
      this.heldText += text;
      return;
    }
    if (this.open?.kind !== 'text') {
      this.closeBlock(out);
      this.open = { kind: 'text', index: this.nextBlockIndex++ };
      out.push(event({ type: 'content_block_start', index: this.open.index, content_block: { type: 'text', text: '' } }));
    }
    this.generatedChars += text.length;
    out.push(event({ type: 'content_block_delta', index: this.open.index, delta: { type: 'text_delta', text } }));
  }

  private toolCall(call: ChunkToolCall, out: SseFrame[]): void {
    const toolIndex = call.index ?? 0;
    const known = this.toolBlocks.get(toolIndex);
    let blockIndex = known?.index;
    // Another id at the same index is another call: Gemini's OpenAI-compatible API sends parallel calls each
    // whole, all at index 0 or with none. OpenAI sends the id once; servers that repeat it repeat the same one.
    const another = known !== undefined && typeof call.id === 'string' && call.id !== '' && call.id !== known.id;
    const args = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
    const held = this.heldCalls.findLast((h) => h.toolIndex === toolIndex);
    const anotherHeld = held !== undefined && typeof call.id === 'string' && call.id !== '' && held.id !== undefined && held.id !== '' && call.id !== held.id;
    if (held && !anotherHeld) {
      held.args += args;
      return;
    }
    if ((blockIndex === undefined || held) && this.open?.kind === 'tool') {
      this.heldCalls.push({ toolIndex, id: call.id, name: call.function?.name ?? '', args });
      return;
    }
    if (blockIndex === undefined || another) {
      this.closeBlock(out);
      blockIndex = this.nextBlockIndex++;
      this.toolBlocks.set(toolIndex, { index: blockIndex, id: call.id });
      this.open = { kind: 'tool', index: blockIndex };
      out.push(
        event({
          type: 'content_block_start',
          index: blockIndex,
          content_block: { type: 'tool_use', id: toolUseId(call.id, blockIndex), name: call.function?.name ?? '', input: {} },
        }),
      );
    } else if (this.open?.kind !== 'tool' || this.open.index !== blockIndex) {
      // Arguments for a tool call whose block is already closed (text came between): Messages blocks
      // cannot be reopened. Calls interleaved with one another are held above, so this is not them.
      return;
    }
    if (args !== '') {
      this.generatedChars += args.length;
      out.push(event({ type: 'content_block_delta', index: blockIndex, delta: { type: 'input_json_delta', partial_json: args } }));
    }
  }

  /** The prompt as message_start announced it, and the output from what was streamed (about 4 characters a token). */
  private estimatedUsage() {
    return { input_tokens: this.options.estimatedInputTokens ?? 0, output_tokens: tokensOfChars(this.generatedChars) };
  }

  private closeBlock(out: SseFrame[]): void {
    if (!this.open) return;
    out.push(event({ type: 'content_block_stop', index: this.open.index }));
    this.open = undefined;
    const thinking = this.heldThinking.splice(0);
    for (const block of thinking) {
      const index = this.nextBlockIndex++;
      if (block.type === 'redacted_thinking') {
        out.push(event({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: block.data } }), event({ type: 'content_block_stop', index }));
        continue;
      }
      out.push(event({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      if (block.thinking) {
        this.generatedChars += block.thinking.length;
        out.push(event({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      }
      if (block.signature) out.push(event({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }));
      out.push(event({ type: 'content_block_stop', index }));
    }
    // the calls held back while this block was open follow it, each as a whole block
    for (const call of this.heldCalls) {
      const index = this.nextBlockIndex++;
      this.toolBlocks.set(call.toolIndex, { index, id: call.id });
      out.push(event({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolUseId(call.id, index), name: call.name, input: {} } }));
      if (call.args !== '') {
        this.generatedChars += call.args.length;
        out.push(event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.args } }));
      }
      out.push(event({ type: 'content_block_stop', index }));
    }
    this.heldCalls.length = 0;
    if (this.heldText !== '') {
      const index = this.nextBlockIndex++;
      this.generatedChars += this.heldText.length;
      out.push(
        event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
        event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: this.heldText } }),
        event({ type: 'content_block_stop', index }),
      );
      this.heldText = '';
    }
  }

  private close(): SseFrame[] {
    const out: SseFrame[] = [];
    if (!this.started) this.start({}, out);
    this.closeBlock(out);
    this.finished = true;
    const delta = event({
      type: 'message_delta',
      // [DONE] without a finish_reason: read as the JSON answer reads a missing one (calls wait for their results)
      delta: { stop_reason: this.stopReason ?? stopReasonFromFinishReason(undefined, this.toolBlocks.size > 0), stop_sequence: this.stopSequence },
      usage: this.usage ? messagesUsageFromChatUsage(this.usage) : this.estimatedUsage(),
    });
    // An upstream that never reported usage (it ignores stream_options): the counts are estimates, which
    // the meter must not take for the upstream's (zeros, taken so, charged the stream nothing).
    if (!this.usage) delta.usageEstimated = true;
    out.push(delta, event({ type: 'message_stop' }));
    return out;
  }
}

function midStreamError(failure: object): UpstreamError {
  const message = (failure as { message?: unknown }).message;
  const said = typeof message === 'string' && message !== '' ? `: ${scrubMessage(message).slice(0, 300)}` : '';
  return new UpstreamError(`The upstream reported an error in the middle of the stream${said}.`, 'upstream_stream_error');
}

/** A Messages event frame: the SSE event name is the payload's `type`, as Anthropic sends it. */
function event(payload: { type: string; [key: string]: unknown }): SseFrame {
  return SseFrame.fromJson(payload, payload.type);
}
