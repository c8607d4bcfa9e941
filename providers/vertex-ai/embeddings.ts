/**
 * OpenAI embeddings <-> Vertex AI text embedding models (`:predict` with one instance per input). Vertex
 * reports the tokens of each input, summed into the usage. A model takes only so many instances a call,
 * so a longer input list goes as several calls, joined in order (providers/gemini/embeddings.ts).
 */
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/plugins/sdk';
import { embeddingInputs, embeddingsResponse, splitEmbeddingInputs } from '../gemini/embeddings';

/**
 * Instances one `:predict` call takes: the gemini-embedding models one (more is Vertex's 400 "batchSize
 * must be 1"), the text-embedding models 250. OpenAI takes 2,048 inputs in one request.
 */
function inputsPerCall(model: string): number {
  return model.startsWith('gemini-embedding') ? 1 : 250;
}

/** The tokens of all its inputs one `:predict` call takes; more is Vertex's 400 "the input token count is N". */
const TOKENS_PER_CALL = 20_000;

/**
 * An input's tokens counted high: a token is about four bytes of English and a CJK character (three
 * bytes) about one token, so a third of the UTF-8 bytes rarely counts too few.
 */
function tokenCeiling(input: string): number {
  return Math.ceil(Buffer.byteLength(input, 'utf8') / 3);
}

/**
 * The requests to send for `request`, when it holds more inputs than the model takes in one call, or more
 * tokens: a RAG client's 250 chunks of a few hundred words are over the 20,000. An input over that on its
 * own goes alone, for Vertex to truncate or refuse.
 */
export function splitEmbeddings(request: EmbeddingsRequest, model: string): EmbeddingsRequest[] | undefined {
  const most = inputsPerCall(model);
  if (most === 1) return splitEmbeddingInputs(request, most);
  const groups: string[][] = [[]];
  let tokens = 0;
  for (const input of embeddingInputs(request)) {
    const estimate = tokenCeiling(input);
    const group = groups[groups.length - 1];
    if (group.length > 0 && (group.length === most || tokens + estimate > TOKENS_PER_CALL)) {
      groups.push([input]);
      tokens = estimate;
    } else {
      group.push(input);
      tokens += estimate;
    }
  }
  return groups.length > 1 ? groups.map((input) => ({ ...request, input })) : undefined;
}

export function vertexEmbeddingBody(request: EmbeddingsRequest): unknown {
  const body: { instances: { content: string }[]; parameters?: { outputDimensionality: number } } = { instances: embeddingInputs(request).map((content) => ({ content })) };
  if (typeof request.dimensions === 'number') body.parameters = { outputDimensionality: request.dimensions };
  return body;
}

interface PredictResponse {
  predictions?: { embeddings?: { values?: number[]; statistics?: { token_count?: number } } }[];
}

export function embeddingsFromVertex(body: PredictResponse, request: EmbeddingsRequest, model: string): EmbeddingsResponse {
  const predictions = body?.predictions ?? [];
  const tokens = predictions.reduce((sum, p) => sum + (p.embeddings?.statistics?.token_count ?? 0), 0);
  return embeddingsResponse(predictions.map((p) => p.embeddings?.values ?? []), request, model, tokens);
}
