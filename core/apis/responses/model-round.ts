/**
 * One model round of a Responses request: a canonical chat request run as a child exchange of the
 * response through all seven stages (so every provider works and each round is scoped, guarded, limited
 * and priced) under the response's principal. The round folds into the response's log entry: the
 * request log has one entry for the whole response.
 */
import type { GatewayContext } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/run-pipeline';
import type { Clock } from '../../plugins/contracts';
import { badResponse } from '../../upstream/call-deployment';
import { childSignal } from '../../upstream/child-signal';
import type { ChatChunk, ChatRequest, ChatResponse, ThinkingBlock, ToolCall } from '../../types/chat';
import { ReasoningCollector } from './reasoning';
import { contentChunks } from '../../formats/content-chunks';
import type { TokenUsage } from '../../types/usage';

export interface RoundResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: TokenUsage;
  reasoningTokens: number;
  /** the reasoning the model showed (Anthropic's blocks with their signatures, or plain text) */
  reasoning: ThinkingBlock[];
  /** the blocks of `reasoning` a provider accepts back on the next turn */
  replayableReasoning: ThinkingBlock[];
  cost: number;
  deploymentId: string;
  /** the answer's citations, as Responses `output_text` annotations */
  annotations: Record<string, unknown>[];
  /** the upstream's `service_tier`, when it said */
  serviceTier?: string;
}

export interface RoundEnvironment {
  pipeline: Pipeline;
  clock: Clock;
  /** the response's exchange: each round is its child */
  parent: GatewayContext;
  signal: AbortSignal;
  /**
   * called once the first round's pipeline has accepted the request (the SSE answer may start); the
   * round's `x-ratelimit-*` headers are then in the parent's responseHeaders
   */
  accepted(deploymentId: string): void;
}

/**
 * Receives the round's text as it arrives (streaming), with the upstream's log probabilities of its tokens
 * when the request asked for them; may wait for the client to drain.
 */
export type TextSink = (delta: string, logprobs?: Logprob[]) => void | Promise<void>;

/** One token's log probability, as chat `logprobs.content` and Responses `output_text` both write it. */
export type Logprob = Record<string, unknown>;

/** Where a round's answer goes as it arrives: its reasoning first, then its text. */
export interface RoundSinks {
  onText: TextSink;
  /** a refusal (OpenAI's `refusal` instead of content); without this sink it goes to `onText` */
  onRefusal?: TextSink;
  onReasoning?: TextSink;
  /** collects the round's reasoning blocks (the caller's, to read signatures while the round runs) */
  reasoning?: ReasoningCollector;
}

export async function runModelRound(env: RoundEnvironment, request: ChatRequest, stream: boolean, sinks: RoundSinks | TextSink): Promise<RoundResult> {
  const { onText, onReasoning, onRefusal = onText, reasoning = new ReasoningCollector() } = typeof sinks === 'function' ? { onText: sinks } : sinks;
  const onThought = async (delta: string) => {
    reasoning.text(delta);
    await onReasoning?.(delta);
  };
  const step = childSignal(env.signal);
  const ctx = env.parent.child('model', 'fold', env.clock.now(), step.signal);
  const body: ChatRequest = stream ? { ...request, stream: true, stream_options: { include_usage: true } } : request;
  ctx.model = { format: 'chat', body, requestedModel: request.model, stream, candidates: [], attempts: [] };
  let round: RoundResult | undefined;
  try {
    const outcome = await env.pipeline.execute(ctx, {
      async deliver(done) {
        const exchange = done.modelExchange;
        const deploymentId = exchange.deployment!.id;
        // the round's rate-limit reading (admission counts rounds, not the response) is the response's
        // to send, as a chat answer sends its own; a later round's replaces an earlier one's
        for (const [name, value] of Object.entries(done.responseHeaders)) if (name.startsWith('x-ratelimit-')) env.parent.responseHeaders[name] = value;
        env.accepted(deploymentId);
        const result = exchange.result!;
        let partial: Partial;
        try {
          const textSinks = { onText, onRefusal };
          partial = result.stream ? await readStream(result.stream, textSinks, onThought, reasoning) : await readBody(result.body as ChatResponse, textSinks, onThought, reasoning);
        } catch (err) {
          // a chat answer this loop cannot read (the wrong shape) is the upstream's fault: a 502, not a 500
          throw badResponse(err);
        }
        round = { ...partial, reasoning: reasoning.blocks, replayableReasoning: reasoning.replayable, usage: { ...done.usage }, cost: done.cost, deploymentId };
      },
      fail() {},
    });
    if (outcome.error || !round) throw outcome.error;
    return round;
  } finally {
    step.release();
  }
}

type Partial = Pick<RoundResult, 'text' | 'toolCalls' | 'finishReason' | 'reasoningTokens' | 'annotations' | 'serviceTier'>;

/** Where a round's answer goes: its text, and a refusal (as a refusal, so clients tell it from an answer). */
interface TextSinks {
  onText: TextSink;
  onRefusal: TextSink;
}

async function readBody(response: ChatResponse, { onText, onRefusal }: TextSinks, onThought: TextSink, reasoning: ReasoningCollector): Promise<Partial> {
  const choice = response?.choices?.[0];
  const message = choice?.message;
  const thought = typeof message?.reasoning_content === 'string' ? message.reasoning_content : typeof message?.reasoning === 'string' ? message.reasoning : '';
  if (Array.isArray(message?.thinking_blocks)) {
    // the blocks hold the text too: tell the client it, keep the blocks as they are
    for (const block of message.thinking_blocks) {
      if (block?.type === 'thinking' && typeof block.thinking === 'string' && block.thinking !== '') await onThought(block.thinking);
      reasoning.block({ ...block, thinking: '' } as never);
    }
  } else if (thought) await onThought(thought);
  const text = (await passContent(choice?.message?.content, onText, onThought, logprobsOf(choice))) + (await passRefusal(choice?.message?.refusal, onRefusal));
  return {
    text,
    toolCalls: toolCallsOf(choice?.message?.tool_calls),
    finishReason: choice?.finish_reason ?? null,
    reasoningTokens: Number(response?.usage?.completion_tokens_details?.reasoning_tokens ?? 0),
    annotations: annotationsOf(message?.annotations),
    ...(typeof response?.service_tier === 'string' ? { serviceTier: response.service_tier } : {}),
  };
}

/** Chat chunks -> text deltas passed on as they come; tool calls assembled by index. */
async function readStream(frames: AsyncIterable<{ isDone: boolean; json: any }>, { onText, onRefusal }: TextSinks, onThought: TextSink, reasoning: ReasoningCollector): Promise<Partial> {
  let text = '';
  let finishReason: string | null = null;
  let reasoningTokens = 0;
  const annotations: Record<string, unknown>[] = [];
  let serviceTier: string | undefined;
  // by the upstream's index, a number checked before use: never a key of a plain object or array; `seq`
  // orders calls that share an index
  const calls = new Map<number, { call: ToolCall; seq: number }>();
  const assembled: { index: number; seq: number; call: ToolCall }[] = [];
  for await (const frame of frames) {
    if (frame.isDone) continue;
    const chunk = frame.json as ChatChunk;
    const details = chunk.usage?.completion_tokens_details as { reasoning_tokens?: number } | undefined;
    if (details?.reasoning_tokens) reasoningTokens = details.reasoning_tokens;
    const tier = (chunk as { service_tier?: unknown }).service_tier;
    if (typeof tier === 'string') serviceTier = tier;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    const thought = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (thought) await onThought(thought);
    for (const block of Array.isArray(delta.thinking_blocks) ? delta.thinking_blocks : []) reasoning.block(block);
    text += await passContent(delta.content, onText, onThought, logprobsOf(choice));
    text += await passRefusal(delta.refusal, onRefusal);
    annotations.push(...annotationsOf((delta as { annotations?: unknown }).annotations));
    for (const d of listOf(delta.tool_calls, 'tool_calls')) {
      const index = d?.index ?? 0;
      if (!Number.isSafeInteger(index) || index < 0) throw new TypeError('a tool call delta without a valid index');
      let call = calls.get(index)?.call;
      // Another id at the same index is another call: Gemini's OpenAI-compatible API sends parallel calls each
      // whole, all at index 0 or with none. OpenAI sends the id once; servers that repeat it repeat the same one.
      const another = call !== undefined && typeof d.id === 'string' && d.id !== '' && call.id !== '' && d.id !== call.id;
      if (!call || another) {
        call = { id: '', type: 'function', function: { name: '', arguments: '' } };
        const seq = assembled.length;
        calls.set(index, { call, seq });
        assembled.push({ index, seq, call });
      }
      if (typeof d.id === 'string' && d.id) call.id = d.id;
      if (typeof d.function?.name === 'string') call.function.name += d.function.name;
      if (typeof d.function?.arguments === 'string') call.function.arguments += d.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  const toolCalls = assembled.sort((a, b) => a.index - b.index || a.seq - b.seq).map(({ call }) => call);
  return { text, toolCalls, finishReason, reasoningTokens, annotations, ...(serviceTier ? { serviceTier } : {}) };
}

/**
 * Chat `annotations` (a search model's `{type: "url_citation", url_citation: {...}}`) as Responses
 * `output_text` annotations, which hold the citation's fields flat.
 */
function annotationsOf(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((a: any) => {
    const cite = a?.type === 'url_citation' ? a.url_citation : undefined;
    if (typeof cite !== 'object' || cite === null) return [];
    return [{ type: 'url_citation', start_index: cite.start_index, end_index: cite.end_index, title: cite.title, url: cite.url }];
  });
}

/** A chat message's text: a string, or nothing (null, absent); any other value is not a chat answer. */
function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new TypeError('message content that is not text');
  return value;
}

/**
 * A message's (or delta's) content passed on in order, its text returned: a string, or a list of chunks
 * (Mistral's reasoning models put their thinking there, before the text).
 */
async function passContent(value: unknown, onText: TextSink, onThought: TextSink, logprobs?: Logprob[]): Promise<string> {
  if (!Array.isArray(value)) {
    const text = textOf(value);
    if (text) await onText(text, logprobs);
    return text;
  }
  let text = '';
  for (const chunk of contentChunks(value)) {
    if (chunk.kind === 'thinking') await onThought(chunk.text);
    else {
      text += chunk.text;
      await onText(chunk.text);
    }
  }
  return text;
}

/** A message's (or delta's) refusal text, passed on; nothing (null, absent) is no refusal. */
async function passRefusal(value: unknown, onRefusal: TextSink): Promise<string> {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new TypeError('a refusal that is not text');
  if (value) await onRefusal(value);
  return value;
}

/**
 * The token log probabilities of a choice's text (chat `logprobs.content`), when the upstream sent them, in
 * the Responses shape, whose lists clients require (the AI SDK refuses an event without `top_logprobs`).
 */
function logprobsOf(choice: { logprobs?: unknown } | undefined): Logprob[] | undefined {
  const content = (choice?.logprobs as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  const tokens = content.filter(isTokenLogprob).map((t) => ({ ...tokenLogprob(t), top_logprobs: Array.isArray(t.top_logprobs) ? t.top_logprobs.filter(isTokenLogprob).map(tokenLogprob) : [] }));
  return tokens.length > 0 ? tokens : undefined;
}

type TokenLogprob = { token: string; logprob: number; bytes?: unknown; top_logprobs?: unknown };

function isTokenLogprob(t: unknown): t is TokenLogprob {
  return typeof (t as TokenLogprob)?.token === 'string' && typeof (t as TokenLogprob).logprob === 'number';
}

function tokenLogprob(t: TokenLogprob): Logprob {
  return { token: t.token, logprob: t.logprob, bytes: Array.isArray(t.bytes) ? t.bytes : [] };
}

/** A list the chat format defines (absent is empty). */
function listOf(value: unknown, name: string): any[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError(`${name} that is not a list`);
  return value;
}

/** A whole answer's tool calls, each with a function name and its arguments as text. */
function toolCallsOf(value: unknown): ToolCall[] {
  return listOf(value, 'tool_calls').map((call) => {
    if (typeof call?.function?.name !== 'string') throw new TypeError('a tool call without a function name');
    const args = call.function.arguments ?? '';
    if (typeof args !== 'string') throw new TypeError('tool call arguments that are not text');
    return { id: typeof call.id === 'string' ? call.id : '', type: 'function', function: { name: call.function.name, arguments: args } };
  });
}
