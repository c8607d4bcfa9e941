import type { ChatMessage, ChatRequest, ToolCall } from '../../core/plugins/sdk';

/**
 * The demo's tool loop: a user message `call <tool> <json arguments>` makes the echo model call that tool
 * when the request offers it, and a conversation whose last message is a tool result is answered with that
 * result. So `/v1/responses` with the `mcp` tool (and any chat client with tools) shows a whole round
 * trip with no real model.
 */
const CALL = /^\s*call\s+(\S+)(?:\s+([\s\S]*))?$/;

/** The tool call the last message asks for, or undefined when it asks for none or the tool is not offered. */
export function requestedToolCall(request: ChatRequest, userText: string, id: string): ToolCall | undefined {
  const last = request.messages[request.messages.length - 1];
  if (!last || last.role !== 'user') return undefined;
  const match = CALL.exec(userText);
  if (!match) return undefined;
  const name = offeredName(request, match[1]);
  if (name === undefined) return undefined;
  const raw = (match[2] ?? '').trim() || '{}';
  try {
    JSON.parse(raw);
  } catch {
    return undefined; // not JSON arguments: echo the text as usual
  }
  return { id: `call_echo_${id}`, type: 'function', function: { name, arguments: raw } };
}

/**
 * The offered tool the user named: the exact name, or, when the gateway prefixed it with a server alias
 * (`<alias>-<tool>`), the single offered tool with that suffix.
 */
function offeredName(request: ChatRequest, wanted: string): string | undefined {
  const names = (request.tools ?? []).map((t) => t.function?.name).filter((n): n is string => typeof n === 'string');
  if (names.includes(wanted)) return wanted;
  const suffixed = names.filter((n) => n.endsWith(`-${wanted}`));
  return suffixed.length === 1 ? suffixed[0] : undefined;
}

/** The text of a trailing tool result, which the model answers with; undefined when the last message is not one. */
export function trailingToolResult(messages: ChatMessage[]): string | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'tool') return undefined;
  if (typeof last.content === 'string') return last.content;
  if (Array.isArray(last.content)) return last.content.map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  return '';
}
