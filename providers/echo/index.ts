import { createHash, randomUUID } from 'node:crypto';
import { definePlugin, GatewayError, InvalidRequestError, SseFrame, type LocalOperation, type Provider, type ChatChunk, type ChatRequest, type ChatResponse, type ToolCall, type EmbeddingsRequest, type EmbeddingsResponse } from '../../core/plugins/sdk';
import { approxTokens, lastUserText, promptText, streamPieces } from './reply';
import { echoImageOperations } from './images';
import { requestedToolCall, trailingToolResult } from './tool-call';

interface EchoOptions {
  /** text put before the echoed message */
  prefix?: string;
  /** embedding vector length */
  dimensions?: number;
}

/** The longest vector the demo embeds (the most text-embedding-3-large makes is 3,072). */
const MAX_DIMENSIONS = 4096;

/**
 * A local demo model: answers with the last user message, streams it word by word and reports usage.
 * Lets `npm start` work with no API key and no upstream.
 */
function createEchoProvider(options: EchoOptions): Provider {
  const prefix = options.prefix ?? '';
  const chat: LocalOperation<ChatRequest, ChatResponse> = {
    local: true,
    async invoke(request, target) {
      const userText = lastUserText(request.messages);
      const id = `chatcmpl-echo-${randomUUID()}`;
      const toolCall = requestedToolCall(request, userText, id.slice(-12));
      const toolResult = trailingToolResult(request.messages);
      const text = toolCall ? '' : prefix + (toolResult ?? userText);
      const usage = { prompt_tokens: approxTokens(promptText(request)), completion_tokens: approxTokens(text), total_tokens: 0 };
      if (toolCall) usage.completion_tokens = approxTokens(toolCall.function.name + toolCall.function.arguments);
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const created = Math.floor(Date.now() / 1000);
      const model = target.model.model;
      if (!request.stream) {
        const message = toolCall
          ? { role: 'assistant' as const, content: null, tool_calls: [toolCall], refusal: null }
          : { role: 'assistant' as const, content: text, refusal: null };
        return { body: { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: toolCall ? 'tool_calls' : 'stop' }], usage } };
      }
      return { stream: echoStream(id, created, model, text, usage, toolCall) };
    },
  };
  const embeddings: LocalOperation<EmbeddingsRequest, EmbeddingsResponse> = {
    local: true,
    async invoke(request, target) {
      const inputs = embeddingInputs(request.input);
      const dims = request.dimensions ?? options.dimensions ?? 8;
      // a vector is built in memory: a client's dimensions of millions held the process (and failed as a 500)
      if (dims > MAX_DIMENSIONS) throw new InvalidRequestError(`Invalid value for 'dimensions': this model makes at most ${MAX_DIMENSIONS}.`, 'invalid_value', { param: 'dimensions' });
      // The openai SDK asks for base64 unless told otherwise and decodes it as little-endian float32.
      const asBase64 = request.encoding_format === 'base64';
      const data = inputs.map((input, index) => {
        const vector = pseudoEmbedding(JSON.stringify(input), dims);
        return { object: 'embedding' as const, index, embedding: asBase64 ? float32Base64(vector) : vector };
      });
      const tokens = inputs.reduce<number>((n, input) => n + (typeof input === 'string' ? approxTokens(input) : Array.isArray(input) ? input.length : 1), 0);
      return { body: { object: 'list', data, model: target.model.model, usage: { prompt_tokens: tokens, total_tokens: tokens } } };
    },
  };
  const images = echoImageOperations();
  return {
    operations: { chat, embeddings, 'images.generations': images.generations, 'images.edits': images.edits },
    toError: (status) => new GatewayError(status, 'server_error', 'echo_error', 'The echo model failed.'),
  };
}

async function* echoStream(id: string, created: number, model: string, text: string, usage: ChatResponse['usage'], toolCall?: ToolCall): AsyncGenerator<SseFrame> {
  const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: string | null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  yield SseFrame.fromJson(chunk({ role: 'assistant', content: '' }, null));
  if (toolCall) {
    yield SseFrame.fromJson(chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: toolCall.function.arguments } }] }, null));
    yield SseFrame.fromJson(chunk({}, 'tool_calls'));
  } else {
    for (const piece of streamPieces(text)) yield SseFrame.fromJson(chunk({ content: piece }, null));
    yield SseFrame.fromJson(chunk({}, 'stop'));
  }
  yield SseFrame.fromJson({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  yield SseFrame.fromRaw('[DONE]');
}

/**
 * The inputs of an embeddings request: a list of token ids (`[9906, 1917]`) is one input, as OpenAI reads
 * it, not one input per id; a list of strings or of token-id lists is one input each.
 */
function embeddingInputs(input: EmbeddingsRequest['input']): (string | number | number[])[] {
  if (!Array.isArray(input)) return [input];
  if (input.length > 0 && input.every((item) => typeof item === 'number')) return [input as number[]];
  return input as (string | number | number[])[];
}

function float32Base64(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** A deterministic unit vector derived from the input, so equal inputs embed equally. */
function pseudoEmbedding(input: string, dims: number): number[] {
  const digest = createHash('sha256').update(input).digest();
  const raw = Array.from({ length: dims }, (_, i) => digest[i % digest.length] / 255 - 0.5);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => Number((v / norm).toFixed(6)));
}

export default definePlugin<'provider', EchoOptions, Provider>({
  kind: 'provider',
  id: 'echo',
  apiVersion: 1,
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { prefix: { type: 'string', nullable: true }, dimensions: { type: 'integer', minimum: 1, maximum: MAX_DIMENSIONS, nullable: true } },
  } as never,
  create: (options) => createEchoProvider(options),
});

