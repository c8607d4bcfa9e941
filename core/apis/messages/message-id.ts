/**
 * Messages ids start with `msg_`; clients and logs that check the prefix must not meet a `chatcmpl-` id
 * in a Messages answer. The chat id is kept inside (so the two can still be matched in upstream logs).
 */
export function messagesId(chatId: unknown): string {
  if (typeof chatId !== 'string' || chatId === '') return 'msg_gateway';
  if (chatId.startsWith('msg_')) return chatId;
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}
