/**
 * Builds the Response object as the loop makes progress, and tells an optional listener (the SSE writer)
 * each step as a Responses stream event. JSON and streaming answers run the very same loop code: the JSON
 * path simply has no listener.
 *
 * Event order follows OpenAI's: `response.created`, `response.in_progress`, then per item
 * `response.output_item.added` ... `response.output_item.done` (with `content_part`/`output_text` events
 * for messages, `mcp_list_tools`/`mcp_call` events for MCP items), then `response.completed` (or
 * `response.incomplete` / `response.failed`).
 */
import { newId } from './ids';
import { messageItem } from './output-items';
import type {
  FunctionCallItem,
  IncompleteReason,
  McpApprovalRequestItem,
  McpCallItem,
  McpListToolsItem,
  MessageItem,
  OutputItem,
  ReasoningItem,
  ResponseObject,
  ResponsesUsage,
} from './responses-types';

export type ResponseEvent = { type: string; [field: string]: unknown };
export type EventListener = (event: ResponseEvent) => void;

/** A reasoning item being written, delta by delta (its one summary part). */
export interface OpenReasoning {
  item: ReasoningItem;
  index: number;
  text: string;
}

/** An assistant message being written, delta by delta. */
export interface OpenMessage {
  item: MessageItem;
  index: number;
}

export class ResponseRecorder {
  private sequence = 0;

  constructor(readonly response: ResponseObject, private readonly listener?: EventListener) {}

  get streaming(): boolean {
    return this.listener !== undefined;
  }

  start(): void {
    this.emit('response.created', { response: this.snapshot() });
    this.emit('response.in_progress', { response: this.snapshot() });
  }

  listTools(item: McpListToolsItem): void {
    const index = this.push(item);
    this.emit('response.output_item.added', { output_index: index, item: { ...item, tools: [] } });
    this.emit('response.mcp_list_tools.in_progress', { output_index: index, item_id: item.id });
    this.emit(item.error ? 'response.mcp_list_tools.failed' : 'response.mcp_list_tools.completed', { output_index: index, item_id: item.id });
    this.emit('response.output_item.done', { output_index: index, item });
  }

  /** An MCP call the gateway is about to run: added, its arguments, in progress. */
  mcpCallStarted(item: McpCallItem): number {
    const index = this.push(item);
    // announced without arguments: clients (the SDK's accumulator) append the deltas to what `added` had
    this.emit('response.output_item.added', { output_index: index, item: { ...item, arguments: '' } });
    this.emit('response.mcp_call_arguments.delta', { output_index: index, item_id: item.id, delta: item.arguments });
    this.emit('response.mcp_call_arguments.done', { output_index: index, item_id: item.id, arguments: item.arguments });
    this.emit('response.mcp_call.in_progress', { output_index: index, item_id: item.id });
    return index;
  }

  mcpCallFinished(item: McpCallItem, index: number, result: { output: string } | { error: string }): void {
    if ('output' in result) {
      item.output = result.output;
      item.status = 'completed';
    } else {
      item.error = result.error;
      item.status = 'failed';
    }
    this.emit(item.status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed', { output_index: index, item_id: item.id });
    this.emit('response.output_item.done', { output_index: index, item });
  }

  approvalRequest(item: McpApprovalRequestItem): void {
    const index = this.push(item);
    this.emit('response.output_item.added', { output_index: index, item });
    this.emit('response.output_item.done', { output_index: index, item });
  }

  functionCall(item: FunctionCallItem): void {
    const index = this.push(item);
    this.emit('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
    this.emit('response.function_call_arguments.delta', { output_index: index, item_id: item.id, delta: item.arguments });
    this.emit('response.function_call_arguments.done', { output_index: index, item_id: item.id, name: item.name, arguments: item.arguments });
    this.emit('response.output_item.done', { output_index: index, item });
  }

  /** Reasoning, as OpenAI streams a summary: the item, one summary part, its text deltas. */
  openReasoning(): OpenReasoning {
    const item: ReasoningItem = { id: newId('rs'), type: 'reasoning', summary: [] };
    const index = this.push(item);
    this.emit('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
    this.emit('response.reasoning_summary_part.added', { output_index: index, item_id: item.id, summary_index: 0, part: { type: 'summary_text', text: '' } });
    return { item, index, text: '' };
  }

  reasoningDelta(open: OpenReasoning, delta: string): void {
    open.text += delta;
    this.emit('response.reasoning_summary_text.delta', { output_index: open.index, item_id: open.item.id, summary_index: 0, delta });
  }

  /** The summary is final; `encrypted` carries the blocks to pass back, when there are any. */
  closeReasoning(open: OpenReasoning, encrypted?: string): void {
    const part = { type: 'summary_text' as const, text: open.text };
    open.item.summary = [part];
    if (encrypted) open.item.encrypted_content = encrypted;
    this.emit('response.reasoning_summary_text.done', { output_index: open.index, item_id: open.item.id, summary_index: 0, text: open.text });
    this.emit('response.reasoning_summary_part.done', { output_index: open.index, item_id: open.item.id, summary_index: 0, part });
    this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }

  /** A message whose one part is text or, for a model that refused, a `refusal` part. */
  openMessage(kind: 'text' | 'refusal' = 'text'): OpenMessage {
    const item = messageItem('', 'in_progress');
    if (kind === 'refusal') item.content = [{ type: 'refusal', refusal: '' }];
    const index = this.push(item);
    this.emit('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
    this.emit('response.content_part.added', { output_index: index, item_id: item.id, content_index: 0, part: { ...item.content[0] } });
    return { item, index };
  }

  /** `logprobs`: the delta's tokens, when the request asked for them (`top_logprobs`) */
  textDelta(message: OpenMessage, delta: string, logprobs: unknown[] = []): void {
    const part = message.item.content[0];
    if (part.type === 'refusal') {
      part.refusal += delta;
      this.emit('response.refusal.delta', { output_index: message.index, item_id: message.item.id, content_index: 0, delta });
      return;
    }
    part.text += delta;
    if (logprobs.length > 0) (part.logprobs ??= []).push(...logprobs);
    this.emit('response.output_text.delta', { output_index: message.index, item_id: message.item.id, content_index: 0, delta, logprobs });
  }

  /** Citations of the message's text, added before it is done (as OpenAI streams them). */
  annotate(message: OpenMessage, annotations: Record<string, unknown>[]): void {
    const part = message.item.content[0];
    if (part.type === 'refusal') return;
    for (const annotation of annotations) {
      part.annotations.push(annotation);
      this.emit('response.output_text.annotation.added', { output_index: message.index, item_id: message.item.id, content_index: 0, annotation_index: part.annotations.length - 1, annotation });
    }
  }

  closeMessage(message: OpenMessage, status: MessageItem['status'] = 'completed'): void {
    const part = message.item.content[0];
    message.item.status = status;
    if (part.type === 'refusal') this.emit('response.refusal.done', { output_index: message.index, item_id: message.item.id, content_index: 0, refusal: part.refusal });
    else this.emit('response.output_text.done', { output_index: message.index, item_id: message.item.id, content_index: 0, text: part.text, logprobs: part.logprobs ?? [] });
    this.emit('response.content_part.done', { output_index: message.index, item_id: message.item.id, content_index: 0, part });
    this.emit('response.output_item.done', { output_index: message.index, item: message.item });
  }

  /** The final state: completed, or incomplete with the reason a bound was hit. */
  finish(usage: ResponsesUsage, incomplete?: IncompleteReason): void {
    this.response.usage = usage;
    if (incomplete) {
      this.response.status = 'incomplete';
      this.response.incomplete_details = { reason: incomplete };
      this.emit('response.incomplete', { response: this.response });
    } else {
      this.response.status = 'completed';
      this.emit('response.completed', { response: this.response });
    }
  }

  /**
   * A failure after the stream started: an `error` event, then `response.failed`. The event carries the
   * error's fields both at its top level (as OpenAI documents it) and as an `error` object (as OpenAI sends
   * it): the openai SDK's stream, under LangChain among others, raises only on the object, and without it
   * a cut answer read as a complete one.
   */
  fail(error: { type: string; code: string; message: string; param?: string | null }, usage: ResponsesUsage): void {
    this.response.status = 'failed';
    this.response.error = { code: error.code, message: error.message };
    this.response.usage = usage;
    const param = error.param ?? null;
    this.emit('error', { code: error.code, message: error.message, param, error: { type: error.type, code: error.code, message: error.message, param } });
    this.emit('response.failed', { response: this.response });
  }

  private push(item: OutputItem): number {
    this.response.output.push(item);
    return this.response.output.length - 1;
  }

  private snapshot(): ResponseObject {
    return { ...this.response, output: [...this.response.output] };
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    if (!this.listener) return;
    this.listener({ type, sequence_number: this.sequence++, ...fields });
  }
}
