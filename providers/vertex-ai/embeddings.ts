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

/** The requests to send for `request`, when it holds more inputs than the model takes in one call. */
export function splitEmbeddings(request: EmbeddingsRequest, model: string): EmbeddingsRequest[] | undefined {
  return splitEmbeddingInputs(request, inputsPerCall(model));
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
