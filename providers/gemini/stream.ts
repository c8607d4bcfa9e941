/**
 * `streamGenerateContent?alt=sse` chunks -> `chat.completion.chunk` frames. Each Gemini chunk is a whole
 * GenerateContentResponse holding the next piece of each candidate: text arrives in pieces, a function
 * call arrives whole (its arguments in one tool_calls delta), the finish reason and final usage come on
 * the last chunk. Gemini sends no end marker; the stream is complete once each candidate's finish reason
 * has arrived, and only then does `endOfStream` add the usage chunk and `[DONE]` (a cut stream stays cut).
 */
import { SseFrame, type ChatChunk, type ChatChunkChoice, type StreamState } from '../../core/plugins/sdk';
import { finishReasonFromGemini, promptBlockedError, silentStopError } from './finish';
import { chatId } from './response';
import { baseCallId, toolCallId } from './tool-ids';
import { chatUsageFromGemini } from './usage';
import type { GeminiResponse, GeminiUsageMetadata } from './wire';

interface GeminiStreamState {
  started: boolean;
  id: string;
  model: string;
  created: number;
  /** per candidate index: tool calls sent so far, and whether anything at all was sent */
  toolCalls: Map<number, number>;
  spoke: Set<number>;
  /** the candidates whose finish reason has come */
  finished: Set<number>;
  usage?: GeminiUsageMetadata;
}

export function chatFramesFromGeminiChunk(body: GeminiResponse, scratch: StreamState, model: string, created: number): SseFrame[] {
  const state = scratch as unknown as GeminiStreamState;
  if (!state.started) {
    const blocked = promptBlockedError(body);
    if (blocked) throw blocked;
    Object.assign(state, { started: true, id: chatId(body.responseId), model: body.modelVersion ?? model, created, toolCalls: new Map(), spoke: new Set(), finished: new Set() });
  }
  if (body.usageMetadata) state.usage = body.usageMetadata;

  const out: SseFrame[] = [];
  for (const [position, candidate] of (body.candidates ?? []).entries()) {
    const index = candidate.index ?? position;
    if (!state.spoke.has(index)) {
      // a safety stop or failed generation before the first word: an error while nothing has been sent for this candidate
      const silent = silentStopError(candidate);
      if (silent) throw silent;
      state.spoke.add(index);
      out.push(chunk(state, index, { role: 'assistant', content: '' }));
    }
    for (const part of candidate.content?.parts ?? []) {
      if (part.thought) continue;
      if (typeof part.text === 'string' && part.text !== '') out.push(chunk(state, index, { content: part.text }));
      else if (part.functionCall) {
        const n = state.toolCalls.get(index) ?? 0;
        state.toolCalls.set(index, n + 1);
        const id = toolCallId(baseCallId(part.functionCall.id, body.responseId, n), part.thoughtSignature);
        out.push(chunk(state, index, { tool_calls: [{ index: n, id, type: 'function', function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) } }] }));
      }
    }
    const finish = finishReasonFromGemini(candidate.finishReason, (state.toolCalls.get(index) ?? 0) > 0);
    if (finish) {
      state.finished.add(index);
      out.push(chunk(state, index, {}, finish));
    }
  }
  return out;
}

/**
 * After the last chunk: usage and `[DONE]`, only if the answer finished: every candidate that sent
 * something has its finish reason (with `n` > 1, one finished candidate says nothing of the others).
 */
export function endOfGeminiStream(scratch: StreamState): SseFrame[] {
  const state = scratch as unknown as GeminiStreamState;
  if (!state.started || state.finished.size === 0 || [...state.spoke].some((index) => !state.finished.has(index))) return [];
  const usage = SseFrame.fromJson({ id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model, choices: [], usage: chatUsageFromGemini(state.usage) } satisfies ChatChunk);
  return [usage, SseFrame.fromRaw('[DONE]')];
}

function chunk(state: GeminiStreamState, index: number, delta: ChatChunkChoice['delta'], finishReason: string | null = null): SseFrame {
  return SseFrame.fromJson({ id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model, choices: [{ index, delta, finish_reason: finishReason, logprobs: null }] } satisfies ChatChunk);
}
