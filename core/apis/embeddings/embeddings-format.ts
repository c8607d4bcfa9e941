import type { EmbeddingsResponse } from '../../types/chat';
import { emptyUsage } from '../../types/usage';
import type { FormatAdapter } from '../../formats/format-adapter';

export const embeddingsFormat: FormatAdapter = {
  format: 'embeddings',
  usageOf: (body: EmbeddingsResponse) => (body?.usage ? { ...emptyUsage(), inputTokens: body.usage.prompt_tokens ?? body.usage.total_tokens ?? 0 } : undefined),
};
