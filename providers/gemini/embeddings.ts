/**
 * OpenAI embeddings <-> Gemini `embedContent` (one input) and `batchEmbedContents` (several, at most 100
 * a call: Google refuses more, and OpenAI clients send up to 2,048, so a longer list goes as several calls).
 * The OpenAI clients ask for base64 by default: the vectors are then packed as little-endian float32,
 * the encoding OpenAI uses. Token-id inputs have no Gemini equivalent and are refused.
 */
import { InvalidRequestError, type EmbeddingsRequest, type EmbeddingsResponse } from '../../core/plugins/sdk';

export function embeddingInputs(request: EmbeddingsRequest): string[] {
  const input = request?.input;
  const inputs = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((i) => typeof i === 'string') ? (input as string[]) : undefined;
  if (!inputs || inputs.length === 0) throw new InvalidRequestError('input: must be a string or a non-empty array of strings for this model', 'invalid_request', { param: 'input' });
  return inputs;
}

/**
 * `request` as requests of at most `size` inputs each, when it holds more (undefined when not), for an
 * upstream that takes only so many in one call.
 */
export function splitEmbeddingInputs(request: EmbeddingsRequest, size: number): EmbeddingsRequest[] | undefined {
  const inputs = embeddingInputs(request);
  if (inputs.length <= size) return undefined;
  const parts: EmbeddingsRequest[] = [];
  for (let at = 0; at < inputs.length; at += size) parts.push({ ...request, input: inputs.slice(at, at + size) });
  return parts;
}

/** The parts' answers as one, indexes counted across the parts and their tokens summed. */
export function joinEmbeddings(answers: EmbeddingsResponse[]): EmbeddingsResponse {
  const data = answers.flatMap((answer) => answer.data).map((item, index) => ({ ...item, index }));
  const tokens = answers.reduce((sum, answer) => sum + (answer.usage?.prompt_tokens ?? 0), 0);
  return { object: 'list', data, model: answers[0].model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** The body for `models/M:embedContent` (one input) or `models/M:batchEmbedContents`. */
export function geminiEmbeddingBody(request: EmbeddingsRequest, modelPath: string): { batch: boolean; body: unknown } {
  const inputs = embeddingInputs(request);
  const one = (text: string) => {
    const item: Record<string, unknown> = { model: modelPath, content: { parts: [{ text }] } };
    if (typeof request.dimensions === 'number') item.outputDimensionality = request.dimensions;
    return item;
  };
  if (inputs.length === 1 && typeof request.input === 'string') return { batch: false, body: one(inputs[0]) };
  return { batch: true, body: { requests: inputs.map(one) } };
}

export function embeddingsResponse(vectors: number[][], request: EmbeddingsRequest, model: string, promptTokens: number): EmbeddingsResponse {
  const base64 = request.encoding_format === 'base64';
  return {
    object: 'list',
    data: vectors.map((values, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(values) : values })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** `{embedding:{values}}` or `{embeddings:[{values}]}` -> vectors. */
export function geminiVectors(body: unknown): number[][] {
  const b = body as { embedding?: { values?: number[] }; embeddings?: { values?: number[] }[] };
  if (b?.embedding) return [b.embedding.values ?? []];
  return (b?.embeddings ?? []).map((e) => e?.values ?? []);
}

function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}
