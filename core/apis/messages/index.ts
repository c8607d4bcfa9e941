/** The Anthropic Messages format: wire types and translation to and from the canonical chat format. */
export * from './types';
export { chatRequestFromMessages } from './to-chat-request';
export { messagesResponseFromChat, toolInput } from './from-chat-response';
export { MessagesStreamTranslator } from './from-chat-stream';
export { messagesFormat, messagesCountTokensFormat, usageOfMessagesFrame } from './format';
export type { MessagesStreamOptions } from './from-chat-stream';
export { finishReasonFromStopReason, stopReasonFromFinishReason } from './stop-reasons';
export {
  chatUsageFromMessagesUsage,
  messagesUsageFromChatUsage,
  tokenUsageFromMessagesUsage,
  readMessagesResponseUsage,
  foldMessagesStreamUsage,
} from './usage';
