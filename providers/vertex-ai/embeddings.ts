/**
 * OpenAI embeddings <-> Vertex AI text embedding models (`:predict` with one instance per input). Vertex
 * reports the tokens of each input, summed into the usage.
 */
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/plugins/sdk';
import { embeddingInputs, embeddingsResponse } from '../gemini/embeddings';

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
