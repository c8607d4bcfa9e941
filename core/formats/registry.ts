import type { ApiFormat } from '../plugins/contracts';
import { chatFormat } from '../apis/chat/chat-format';
import { embeddingsFormat } from '../apis/embeddings/embeddings-format';
import { messagesCountTokensFormat, messagesFormat } from '../apis/messages/format';
import type { FormatAdapter } from './format-adapter';
import { imagesEditsFormat, imagesGenerationsFormat } from '../apis/images/images-format';

/** Every client-facing format the core can serve. Endpoint families add theirs here. */
const FORMATS = new Map<ApiFormat, FormatAdapter>([
  ['chat', chatFormat],
  ['embeddings', embeddingsFormat],
  ['images.generations', imagesGenerationsFormat], ['images.edits', imagesEditsFormat],
  ['messages', messagesFormat],
  ['messages.count_tokens', messagesCountTokensFormat],
]);

export function registerFormat(adapter: FormatAdapter): void {
  FORMATS.set(adapter.format, adapter);
}

export function formatAdapter(format: ApiFormat): FormatAdapter {
  const adapter = FORMATS.get(format);
  if (!adapter) throw new Error(`no format adapter for "${format}"`);
  return adapter;
}
