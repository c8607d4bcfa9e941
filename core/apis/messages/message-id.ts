/**
 * Messages ids start with `msg_`; clients and logs that check the prefix must not meet a `chatcmpl-` id
 * in a Messages answer. The chat id is kept inside (so the two can still be matched in upstream logs).
 */
export function messagesId(chatId: unknown): string {
  if (typeof chatId !== 'string' || chatId === '') return 'msg_gateway';
  if (chatId.startsWith('msg_')) return chatId;
  return `msg_${chatId.replace(/^chatcmpl-/, '')}`;
}

/**
 * A tool_use block's id: the upstream call's, or one made from the block's index when the upstream gave
 * none or an empty one (llama.cpp's server, some vLLM and SGLang builds). Anthropic clients answer a call
 * by its id (tool_result.tool_use_id) and tell parallel calls apart by it: a block without one cannot be answered.
 */
export function toolUseId(callId: unknown, blockIndex: number): string {
  return typeof callId === 'string' && callId !== '' ? callId : `toolu_gateway_${blockIndex}`;
}
