/**
 * The gateway-run tool loop of a Responses request (interface.md §1, first way to consume MCP):
 *
 *   list the tools -> settle approvals the client answered -> model round -> run the MCP calls it asked
 *   for (concurrently) -> feed the results back -> ... until the model answers without tool calls.
 *
 * Bounded by `responses.maxToolRounds` (rounds that ran tools) and `responses.timeLimitSeconds`; a bound
 * that is hit ends the response as `incomplete` with the reason. The calls themselves are bounded by
 * `responses.maxToolCallsPerRound` and `responses.maxToolCalls`: a call beyond either is not run, and the
 * model gets an error result saying which limit (so one request cannot fan out to hundreds of upstream
 * calls). A call that needs approval, or a client
 * function call, ends the response so the client can answer (`mcp_approval_response`,
 * `function_call_output`) in a follow-up request.
 */
import type { Clock } from '../../plugins/contracts';
import type { ChatMessage, ChatRequest, ChatTool, ContentPart, ToolCall } from '../../types/chat';
import { emptyUsage, type TokenUsage } from '../../types/usage';
import { ClientAbortError } from '../../upstream/upstream-client';
import { newId } from './ids';
import type { ApprovalAnswer, PendingApproval } from './input-to-messages';
import { chatToolsOf, needsApproval, type McpToolSet, type OfferedTool } from './mcp-tool-set';
import { runToolCall, type ToolRunEnvironment } from './mcp-tool-runner';
import { runModelRound, type RoundEnvironment } from './model-round';
import type { AllowedTools, ChatTemplate } from './request-to-chat';
import { approvalRequestItem, functionCallItem, mcpCallItem } from './output-items';
import type { ResponseRecorder, OpenMessage, OpenReasoning } from './response-recorder';
import { encodeReasoning, ReasoningCollector } from './reasoning';
import type { IncompleteReason } from './responses-types';

/** An approval the client answered, to settle before the first round. */
export interface ApprovalToSettle {
  pending: PendingApproval;
  answer: ApprovalAnswer | undefined;
  /** the tool message to fill with the result (already in `messages`); absent: append one */
  message?: ChatMessage;
}

export interface LoopInput {
  /** the chat request without messages (sampling, output cap, format, client function tools) */
  template: ChatTemplate;
  instructions: ChatMessage[];
  /** the conversation so far, without instructions; the loop appends to it */
  messages: ChatMessage[];
  /** this request's new input, appended once the answered approvals are settled */
  newMessages: ChatMessage[];
  toolSet?: McpToolSet;
  /** the MCP tools an `allowed_tools` choice lets the model call (the client's functions are already narrowed) */
  allowed?: AllowedTools;
  approvals: ApprovalToSettle[];
  stream: boolean;
}

export interface LoopLimits {
  maxToolRounds: number;
  /** MCP calls admitted from one model round (run or sent for approval) */
  maxToolCallsPerRound: number;
  /** MCP calls admitted over the whole request, approved ones included */
  maxToolCalls: number;
  /** the request's own `max_tool_calls`, which may only lower `maxToolCalls` */
  requestedMaxToolCalls?: number;
  /** clock time (ms) after which no new step starts */
  deadline: number;
}

export interface LoopTotals {
  usage: TokenUsage;
  reasoningTokens: number;
  /** the model rounds' cost (logged in the response's entry) */
  modelCost: number;
  /** tool fees and gateway_proxy model calls (each logged in its own entry) */
  toolCost: number;
  rounds: number;
  toolCalls: number;
  /** MCP calls answered with an error because a fan-out limit was reached */
  toolCallsRefused: number;
  deploymentId?: string;
}

export interface LoopResult {
  pending: PendingApproval[];
  incomplete?: IncompleteReason;
}

export interface LoopEnvironment {
  round: RoundEnvironment;
  tools: ToolRunEnvironment;
  clock: Clock;
  /** wait until the client has taken what was written (streaming back-pressure) */
  drain(): Promise<void>;
}

export const DENIED_OUTPUT = 'The user did not approve this tool call.';
export const TIME_LIMIT_STOP = 'The tool call was stopped: the response reached its time limit.';

/** The abort reason of a request whose `responses.timeLimitSeconds` passed (tells it from a client gone). */
export class TimeLimitReached extends Error {
  constructor() {
    super('The response reached its time limit.');
    this.name = 'TimeLimitReached';
  }
}

export class ToolLoop {
  readonly totals: LoopTotals = { usage: emptyUsage(), reasoningTokens: 0, modelCost: 0, toolCost: 0, rounds: 0, toolCalls: 0, toolCallsRefused: 0 };
  /** MCP calls admitted so far (counted against `maxToolCalls`) */
  private admitted = 0;

  constructor(private readonly env: LoopEnvironment, private readonly recorder: ResponseRecorder, private readonly limits: LoopLimits) {}

  async run(input: LoopInput): Promise<LoopResult> {
    const { messages, toolSet } = input;
    for (const listing of toolSet?.listings ?? []) this.recorder.listTools(listing);
    await this.settleApprovals(input);
    messages.push(...input.newMessages);

    const clientFunctions = new Set((input.template.tools ?? []).map((t) => t.function?.name).filter((n): n is string => !!n));
    const mcpTools: ChatTool[] = toolSet ? chatToolsOf(toolSet, input.allowed) : [];
    // only the MCP tools the model was offered run: one an `allowed_tools` choice left out (which the
    // model may still name, from earlier turns) is an unknown tool, as it is to OpenAI's loop
    const offered = new Set(mcpTools.map((t) => t.function!.name));
    const tools = [...(input.template.tools ?? []), ...mcpTools.filter((t) => !clientFunctions.has(t.function!.name))];
    // chat APIs refuse tool_choice and parallel_tool_calls on a request without tools
    const { tool_choice, parallel_tool_calls, ...withoutToolParams } = input.template;
    let roundTemplate: ChatTemplate = tools.length ? { ...input.template, tools } : withoutToolParams;
    // a forced choice ('required', a named tool) binds the loop's first model turn only, as on OpenAI's
    // hosted loop: kept on every round, the model could never answer after the tool results. A request
    // that settles approvals resumes a loop whose first turn was the earlier response's.
    const unforced = () => {
      const choice = roundTemplate.tool_choice;
      if (choice !== undefined && choice !== 'none' && choice !== 'auto') roundTemplate = { ...roundTemplate, tool_choice: 'auto' };
    };
    if (input.approvals.length > 0) unforced();
    // max_output_tokens bounds the whole response (as OpenAI's does), not each round
    const outputCap = input.template.max_tokens ?? undefined;
    const outputLeft = () => (outputCap === undefined ? undefined : outputCap - this.totals.usage.outputTokens);
    let toolRounds = 0;
    while (true) {
      if (this.env.clock.now() >= this.limits.deadline) return { pending: [], incomplete: 'time_limit' };
      // the client went away (during the tool calls, say): a round would run its stages, and be admitted
      // against the key's rate limit and counted in the entry's rounds, for an answer no one reads
      const stopped = this.env.round.signal;
      if (stopped.aborted && !(stopped.reason instanceof TimeLimitReached)) throw new ClientAbortError();
      const left = outputLeft();
      if (left !== undefined && left <= 0) return { pending: [], incomplete: 'max_output_tokens' };
      const round = await this.modelRound({ ...roundTemplate, ...(left !== undefined ? { max_tokens: left } : {}), messages: [...input.instructions, ...messages] }, input.stream);
      unforced();
      const limited = round.finishReason === 'length' ? 'max_output_tokens' : round.finishReason === 'content_filter' ? 'content_filter' : undefined;
      // signed reasoning goes back with the turn it preceded (Anthropic requires it before tool results)
      const thinking = round.replayableReasoning.length > 0 ? { thinking_blocks: round.replayableReasoning } : {};
      if (round.toolCalls.length === 0 || limited) {
        // an answer without a word (Claude's, at times, after a tool result) is not kept: Anthropic refuses
        // an empty assistant turn in the middle of a conversation, so continuing it would fail
        if (round.text || round.replayableReasoning.length > 0) messages.push({ role: 'assistant', content: round.text, ...thinking });
        return { pending: [], incomplete: limited };
      }
      const calls = round.toolCalls.map((c): ToolCall => ({ ...c, id: c.id || newId('call') }));
      // without MCP tools every call is the client's (even one of a function it did not declare)
      const isClients = (c: ToolCall) => !toolSet || clientFunctions.has(c.function.name);
      const mcpCalls = calls.filter((c) => !isClients(c));
      if (mcpCalls.length > 0) {
        const spent = (outputLeft() ?? 1) <= 0;
        const bound = toolRounds >= this.limits.maxToolRounds ? 'max_tool_rounds' : this.env.clock.now() >= this.limits.deadline ? 'time_limit' : spent ? 'max_output_tokens' : undefined;
        if (bound) {
          if (round.text) messages.push({ role: 'assistant', content: round.text, ...thinking });
          return { pending: [], incomplete: bound };
        }
        toolRounds++;
      }
      messages.push({ role: 'assistant', content: round.text || null, tool_calls: calls, ...thinking });
      const pending = await this.runCalls(mcpCalls, toolSet, offered, messages);
      const forClient = calls.filter(isClients);
      for (const call of forClient) this.recorder.functionCall(functionCallItem(call.id, call.function.name, call.function.arguments));
      if (pending.length > 0 || forClient.length > 0) return { pending };
    }
  }

  /**
   * The MCP calls of one round: those needing approval become `mcp_approval_request` items (returned as
   * pending), the others run concurrently; their results are appended in the model's order.
   */
  private async runCalls(mcpCalls: ToolCall[], toolSet: McpToolSet | undefined, offered: Set<string>, messages: ChatMessage[]): Promise<PendingApproval[]> {
    const pending: PendingApproval[] = [];
    const auto: { call: ToolCall; tool: OfferedTool }[] = [];
    const results = new Map<string, string>();
    let inRound = 0;
    for (const call of mcpCalls) {
      const tool = offered.has(call.function.name) ? toolSet?.byFunction.get(call.function.name) : undefined;
      const refusal = this.refusal(inRound);
      if (refusal) {
        this.totals.toolCallsRefused++;
        results.set(call.id, refusal);
        continue;
      }
      inRound++;
      this.admitted++;
      if (!tool) {
        results.set(call.id, `Error: unknown tool "${call.function.name}".`);
      } else if (needsApproval(tool)) {
        const item = approvalRequestItem(tool.mcpName, call.function.arguments, tool.entry.server_label);
        this.recorder.approvalRequest(item);
        pending.push({ approvalRequestId: item.id, toolCallId: call.id, name: tool.mcpName, arguments: call.function.arguments, serverLabel: tool.entry.server_label });
      } else {
        auto.push({ call, tool });
      }
    }
    const outputs = await Promise.all(auto.map(({ call, tool }) => this.runTool(tool, call.function.arguments)));
    auto.forEach(({ call }, i) => results.set(call.id, outputs[i].text));
    for (const call of mcpCalls) if (results.has(call.id)) messages.push({ role: 'tool', tool_call_id: call.id, content: results.get(call.id)! });
    // the tool answers must follow their calls directly, so the images follow the run of answers; while
    // some of the turn's calls wait for approval, after theirs too (the next request's)
    const media = outputs.flatMap((o) => o.media);
    if (media.length > 0 && pending.length > 0) pending[0].media = media;
    else if (media.length > 0) messages.push({ role: 'user', content: media });
    return pending;
  }

  /** Why a call is not admitted, as the model is told, or undefined when it may run. */
  private refusal(admittedInRound: number): string | undefined {
    const { maxToolCallsPerRound, maxToolCalls, requestedMaxToolCalls } = this.limits;
    if (requestedMaxToolCalls !== undefined && this.admitted >= requestedMaxToolCalls) return `Error: tool call not run: this response reached its limit of ${requestedMaxToolCalls} tool calls (max_tool_calls).`;
    if (this.admitted >= maxToolCalls) return `Error: tool call not run: this response reached its limit of ${maxToolCalls} tool calls (responses.maxToolCalls).`;
    if (admittedInRound >= maxToolCallsPerRound) return `Error: tool call not run: at most ${maxToolCallsPerRound} tool calls run per model turn (responses.maxToolCallsPerRound); ask for the others in a later turn.`;
    return undefined;
  }

  /** Run (or refuse) the calls the client answered; each approved call is an `mcp_call` item. */
  private async settleApprovals(input: LoopInput): Promise<void> {
    // one approval can come twice (stored with the previous response, and sent back in the input): it
    // runs once, and each copy of the call in the conversation gets its result
    const settled = new Map<string, Promise<{ text: string; media: ContentPart[] }>>();
    const outputs = await Promise.all(
      input.approvals.map(({ pending, answer }) => {
        let output = settled.get(pending.approvalRequestId);
        if (!output) settled.set(pending.approvalRequestId, (output = this.settleApproval(input, pending, answer)));
        return output;
      }),
    );
    const media = new Map<ChatMessage, ContentPart[]>();
    input.approvals.forEach(({ pending, message }, i) => {
      let answer = message;
      if (answer) answer.content = outputs[i].text;
      else input.messages.push((answer = { role: 'tool', tool_call_id: pending.toolCallId, content: outputs[i].text }));
      const images = [...(pending.media ?? []), ...outputs[i].media];
      if (images.length > 0) media.set(answer, images);
    });
    if (media.size > 0) for (const list of [input.messages, input.newMessages]) attachMedia(list, media);
  }

  private async settleApproval(input: LoopInput, pending: PendingApproval, answer: ApprovalAnswer | undefined): Promise<{ text: string; media: ContentPart[] }> {
    const told = (text: string) => ({ text, media: [] });
    if (!answer?.approve) return told(`${DENIED_OUTPUT}${answer?.reason ? ` Reason: ${answer.reason}` : ''}`);
    const tool = input.toolSet?.byMcpName.get(pending.name);
    if (!tool) return told(`Error: the tool "${pending.name}" is no longer available.`);
    const refusal = this.refusal(0);
    if (refusal) return (this.totals.toolCallsRefused++, told(refusal));
    this.admitted++;
    return this.runTool(tool, pending.arguments, pending.approvalRequestId);
  }

  /** One tool call, as an `mcp_call` item; returns what the model is told. */
  private async runTool(tool: OfferedTool, args: string, approvalRequestId?: string): Promise<{ text: string; media: ContentPart[] }> {
    const item = mcpCallItem(tool.mcpName, args, tool.entry.server_label, approvalRequestId);
    const index = this.recorder.mcpCallStarted(item);
    let outcome = await runToolCall(this.env.tools, tool, args);
    // a call cut by the time limit says so, rather than the transport's abort error
    if ('error' in outcome && this.env.tools.signal.reason instanceof TimeLimitReached) outcome = { error: TIME_LIMIT_STOP, cost: outcome.cost };
    this.totals.toolCost += outcome.cost;
    this.totals.toolCalls++;
    this.recorder.mcpCallFinished(item, index, outcome);
    await this.env.drain();
    const text = outcome.modelText ?? ('output' in outcome ? outcome.output : outcome.error);
    return { text: 'output' in outcome ? text : `Error: ${text}`, media: outcome.media ?? [] };
  }

  private async modelRound(request: ChatRequest, stream: boolean) {
    let open: OpenMessage | undefined;
    let thought: OpenReasoning | undefined;
    let thoughtClosed = false;
    // the reasoning item ends where the answer starts (its signature, if any, is known only at the end)
    const closeThought = (encrypted?: string) => {
      if (!thought || thoughtClosed) return;
      this.recorder.closeReasoning(thought, encrypted);
      thoughtClosed = true;
    };
    const reasoning = new ReasoningCollector();
    let round;
    try {
      round = await runModelRound(this.env.round, request, stream, {
        reasoning,
        onReasoning: async (delta) => {
          // reasoning after the answer started (interleaved) is kept in the blocks, not shown again
          if (open || thoughtClosed) return;
          thought ??= this.recorder.openReasoning();
          this.recorder.reasoningDelta(thought, delta);
          await this.env.drain();
        },
        onText: async (delta, logprobs) => {
          if (!open) {
            closeThought(encodeReasoning(reasoning.replayable));
            open = this.recorder.openMessage();
          }
          this.recorder.textDelta(open, delta, logprobs);
          await this.env.drain();
        },
        // a refusal is a message with a `refusal` part, unless text already began the message
        onRefusal: async (delta) => {
          if (!open) {
            closeThought(encodeReasoning(reasoning.replayable));
            open = this.recorder.openMessage('refusal');
          }
          this.recorder.textDelta(open, delta);
          await this.env.drain();
        },
      });
    } catch (err) {
      // a round cut short (time limit, upstream failure) leaves its text so far as an incomplete message
      closeThought();
      if (open) this.recorder.closeMessage(open, 'incomplete');
      throw err;
    }
    const encrypted = encodeReasoning(round.replayableReasoning);
    // reasoning without readable text (redacted) still needs an item to travel back in
    if (!thought && encrypted) thought = this.recorder.openReasoning();
    closeThought(encrypted);
    const t = this.totals;
    t.rounds++;
    t.modelCost += round.cost;
    t.reasoningTokens += round.reasoningTokens;
    t.deploymentId ??= round.deploymentId;
    for (const k of Object.keys(t.usage) as (keyof TokenUsage)[]) t.usage[k] += round.usage[k];
    if (round.serviceTier) this.recorder.response.service_tier = round.serviceTier;
    // an answer without a word is still a message, as OpenAI's is: the Agents SDK reads a response with
    // no message and no tool call as unfinished and asks again, up to its turn limit
    if (!open && round.toolCalls.length === 0 && round.finishReason !== 'length') open = this.recorder.openMessage();
    if (open) {
      this.recorder.annotate(open, round.annotations);
      this.recorder.closeMessage(open, round.finishReason === 'length' ? 'incomplete' : 'completed');
    }
    return round;
  }
}

/**
 * The images of approved calls' results, in a user message after the run of tool answers they belong to:
 * a chat tool message holds text only, and the answers must follow their calls directly.
 */
function attachMedia(list: ChatMessage[], media: Map<ChatMessage, ContentPart[]>): void {
  for (let i = 0; i < list.length; i++) {
    if (list[i].role !== 'tool') continue;
    const parts: ContentPart[] = [];
    let end = i;
    for (; end < list.length && list[end].role === 'tool'; end++) parts.push(...(media.get(list[end]) ?? []));
    if (parts.length > 0) list.splice(end, 0, { role: 'user', content: parts });
    i = end;
  }
}
