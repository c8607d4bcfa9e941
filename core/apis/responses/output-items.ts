/** Builders for Responses output items and usage, from what the chat rounds produced. */
import type { TokenUsage } from '../../types/usage';
import { newId } from './ids';
import type { FunctionCallItem, McpApprovalRequestItem, McpCallItem, MessageItem, ResponsesUsage } from './responses-types';

export function messageItem(text: string, status: MessageItem['status'] = 'completed', id = newId('msg')): MessageItem {
  return { id, type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

export function functionCallItem(callId: string, name: string, args: string): FunctionCallItem {
  return { id: newId('fc'), type: 'function_call', call_id: callId, name, arguments: args, status: 'completed' };
}

export function mcpCallItem(name: string, args: string, serverLabel: string, approvalRequestId?: string): McpCallItem {
  return {
    id: newId('mcp'),
    type: 'mcp_call',
    name,
    arguments: args,
    server_label: serverLabel,
    output: null,
    error: null,
    status: 'in_progress',
    ...(approvalRequestId ? { approval_request_id: approvalRequestId } : {}),
  };
}

export function approvalRequestItem(name: string, args: string, serverLabel: string): McpApprovalRequestItem {
  return { id: newId('mcpr'), type: 'mcp_approval_request', name, arguments: args, server_label: serverLabel };
}

/** TokenUsage summed over the rounds -> the Responses usage object. */
export function responsesUsage(usage: TokenUsage, reasoningTokens = 0): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
