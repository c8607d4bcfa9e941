/**
 * `POST /v1/responses`: a Responses request translated to canonical chat rounds (so every provider
 * serves it), with the gateway-run MCP tool loop. Answers JSON or a Responses event stream; the cost of
 * every model round and tool call adds up in `x-gateway-response-cost` (a trailer when streaming). The
 * request log gets one entry for the response (the model rounds) plus one per tool call.
 */
import { setMaxListeners } from 'node:events';
import type { Request, Response } from 'express';
import { InvalidRequestError, type GatewayError } from '../../errors/gateway-error';
import { bearerToken, providerVisibleHeaders } from '../../http/credentials';
import { OPENAI_ERRORS, sendError } from '../../http/error-shapes';
import { openAiErrorBody } from '../../errors/render';
import { onClientGone } from '../../http/client-gone';
import type { GatewayServices } from '../../http/gateway-services';
import { MODEL_ID_HEADER, refuseBody, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody } from '../../http/validate';
import { responsesRequestValidator } from './request-schema';
import { GatewayContext, type AuthedContext } from '../../pipeline/context';
import { MCP_GATEWAY, type McpGateway } from '../mcp/mcp-gateway';
import { mcpHeadersOf } from '../mcp/upstream-headers';
import { COST_HEADER } from '../../stages/spend';
import { formatCost } from '../../spend/pricing';
import type { TokenUsage } from '../../types/usage';
import { newId } from './ids';
import { resolveItemReferences } from './item-references';
import { inInputTerms, inputToMessages, type PendingApproval, type TranslatedInput } from './input-to-messages';
import { mcpEntries, mcpToolChoice, resolveMcpTools } from './mcp-tool-set';
import { responsesUsage } from './output-items';
import { allowedToolsOf, chatTemplate, instructionMessages } from './request-to-chat';
import { ResponseRecorder } from './response-recorder';
import { ResponseStateStore } from './response-state-store';
import type { McpToolEntry, ResponseObject, ResponsesRequest, ToolEntry } from './responses-types';
import { SseSink } from './sse-sink';
import { TimeLimitReached, ToolLoop, type ApprovalToSettle, type LoopResult } from './tool-loop';

/**
 * Where a Responses request's key is and how its errors are written, for a refused body: logged as the
 * endpoint's request (the format only matters once a model is called).
 */
export const RESPONSES_CALLER: ModelEndpointSpec = { endpoint: 'responses', format: 'chat', errors: OPENAI_ERRORS, credential: (req) => bearerToken(req.headers.authorization) };

export class ResponsesHandler {
  private readonly states: ResponseStateStore;
  private readonly mcp?: McpGateway;

  constructor(private readonly services: GatewayServices) {
    this.states = new ResponseStateStore(services.store, services.clock, services.config.responses.maxStoredPerKey);
    this.mcp = services.container.isRegistered(MCP_GATEWAY) ? services.container.resolve<McpGateway>(MCP_GATEWAY) : undefined;
  }

  /**
   * The response is a parent exchange: signed in once by the auth stage, its call stage runs the tool
   * loop, whose model rounds and tool calls are child exchanges through every stage; its spend stage
   * writes the one entry the rounds add up to (each tool call has its own).
   */
  async handle(req: Request, res: Response): Promise<void> {
    const { services } = this;
    const startedAt = services.clock.now();
    let body: ResponsesRequest;
    try {
      body = validateRequest(req.body);
    } catch (err) {
      // the key first: a caller without a valid one learns nothing about what this endpoint accepts
      return refuseBody(services, RESPONSES_CALLER, req, res, err, req.body);
    }
    const abort = new AbortController();
    const stopWatching = onClientGone(res, () => abort.abort());
    // the time limit also stops work in flight (between steps the loop checks the clock itself)
    const timeUp = new AbortController();
    const limitMs = services.config.responses.timeLimitSeconds * 1000;
    const timer = setTimeout(() => timeUp.abort(new TimeLimitReached()), limitMs);
    timer.unref?.();

    const signal = AbortSignal.any([abort.signal, timeUp.signal]);
    const ctx = new GatewayContext('responses', 'responses', startedAt, { headers: providerVisibleHeaders(req.headers) }, abort.signal, res.locals.requestId as string);
    ctx.credential = bearerToken(req.headers.authorization);
    const run: Run = {
      req,
      body,
      startedAt,
      deadline: startedAt + limitMs,
      signal,
      timedOut: () => timeUp.signal.aborted && !abort.signal.aborted,
      // a client that stops reading holds the loop back only until the time limit, which then ends it
      sink: body.stream === true ? new SseSink(res, signal) : undefined,
      response: initialResponse(body, Math.floor(startedAt / 1000)),
    };
    // the tool calls of one round run at once, each a child exchange following this signal
    setMaxListeners(services.config.responses.maxToolCallsPerRound + 10, run.signal);
    const recorder = new ResponseRecorder(run.response, run.sink?.listener);
    ctx.parentWork = {
      model: body.model,
      run: (authed) => this.runLoop(authed, run, recorder),
      logTarget: (parent) => ({
        model: body.model,
        deploymentId: parent.firstDeploymentId ?? null,
        details: {
          responseId: run.response.id,
          rounds: parent.foldedChildren,
          toolCalls: run.loop?.totals.toolCalls ?? 0,
          ...(run.loop?.totals.toolCallsRefused ? { toolCallsRefused: run.loop.totals.toolCallsRefused } : {}),
          ...(run.response.status === 'incomplete' ? { incomplete: run.response.incomplete_details?.reason } : {}),
        },
      }),
    };
    try {
      const outcome = await services.pipeline.execute(ctx, {
        deliver: async (done) => this.answer(res, run, recorder, undefined, done.cost, done.responseHeaders),
        fail: (failed, error) => {
          const streaming = run.sink?.opened === true;
          this.answer(res, run, recorder, error, failed.cost, {}, failed.usage);
          // a failure after the events began ends the stream: logged as a chat stream's would be
          if (streaming) return { status: error.status, error, reason: error.code === 'upstream_stream_cut' ? 'upstream_cut' : 'stream_error' };
        },
      });
      if (outcome.reason === 'client_abort') res.end();
    } finally {
      clearTimeout(timer);
      stopWatching();
    }
  }

  /** Gather the conversation and the tools, and run the loop (throws what fails). */
  private async runLoop(ctx: AuthedContext, run: Run, recorder: ResponseRecorder): Promise<void> {
    const { services } = this;
    const { req, body } = run;
    const principal = ctx.principal;
    const template = chatTemplate(body);
    const entries = mcpEntries(body.tools);
    const previous = body.previous_response_id ? await this.states.load(body.previous_response_id, principal) : undefined;
    if (body.previous_response_id && !previous) {
      // OpenAI's answer, which clients that fall back to sending the whole conversation look for: a 400
      throw new InvalidRequestError(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_not_found', { param: 'previous_response_id' });
    }
    const input = inputToMessages(await resolveItemReferences(body.input, (id) => this.states.loadItem(id, principal)));
    const messages = [...(previous?.messages ?? [])];
    const continuedLength = messages.length;
    // first: an input of approval answers alone makes no message, and is missing nothing when they are stray
    const approvals = approvalsToSettle(previous?.pending ?? [], input);
    if (messages.length === 0 && input.messages.length === 0) throw new InvalidRequestError("Missing required parameter: 'input'.", 'missing_required_parameter', { param: 'input' });
    const mcpHeaders = mcpHeadersOf(req.headers);
    const toolSet = entries.length > 0 ? await resolveMcpTools(entries, principal, mcpHeaders, { mcp: this.mcp }) : undefined;
    ctx.mcpScope = toolSet?.scope;
    const choice = body.tool_choice as { type?: unknown; server_label?: unknown; name?: unknown } | null | undefined;
    if (choice?.type === 'mcp') template.tool_choice = mcpToolChoice(choice, toolSet, template.tools?.length ?? 0);

    recorder.start();
    const { signal, sink } = run;
    run.loop = new ToolLoop(
      {
        clock: services.clock,
        drain: () => sink?.drain() ?? Promise.resolve(),
        round: {
          pipeline: services.pipeline,
          clock: services.clock,
          parent: ctx,
          signal,
          accepted: (deploymentId) => sink?.open({ ...ctx.responseHeaders, [MODEL_ID_HEADER]: deploymentId }),
        },
        tools: { pipeline: services.pipeline, clock: services.clock, parent: ctx, mcpHeaders, signal, responseId: run.response.id },
      },
      recorder,
      { ...services.config.responses, deadline: run.deadline, requestedMaxToolCalls: body.max_tool_calls ?? undefined },
    );
    const instructions = instructionMessages(body);
    const result = await run.loop.run({ template, instructions, messages, newMessages: input.messages, toolSet, allowed: allowedToolsOf(body.tool_choice), approvals, stream: body.stream === true }).catch((err): LoopResult => {
      // the time limit ends the response as incomplete with what it has so far, kept like any other
      // incomplete response so the client can continue it (messages hold every step that finished)
      if (!run.timedOut()) throw inInputTerms(err, [...instructions, ...messages], input.messages);
      return { pending: [], incomplete: 'time_limit' };
    });
    // only what this response added: the rest is already stored under the responses it continues. Stored
    // before the response is said to be finished: a store that fails then fails the response (one
    // `response.failed`), rather than following a `response.completed` the client already took as final
    if (body.store !== false) {
      await this.states.save(run.response.id, principal, { model: body.model, messages: messages.slice(continuedLength), pending: result.pending, output: run.response.output }, previous);
    }
    // the usage this response's log entry charges (`ctx.usage`, each round folded in as it settled): the
    // loop's totals leave out a round the time limit cut, which is charged all the same (by its estimate)
    recorder.finish(responsesUsage(ctx.usage, run.loop.totals.reasoningTokens), result.incomplete);
  }

  /**
   * JSON with the cost, deployment and rate-limit headers (`rateLimitHeaders`: the last round's
   * reading), or the end of the event stream with the cost trailer.
   * `roundsCost` is what this response's log entry charges for its model rounds (each folded in as it
   * settled): the loop's totals count only the rounds that finished, not one an upstream cut or the time
   * limit ended, which is charged all the same. `roundsUsage` is that entry's usage likewise (a failed
   * round's estimate included), which the failed response reports so the client and the log agree.
   */
  private answer(res: Response, run: Run, recorder: ResponseRecorder, failure: GatewayError | undefined, roundsCost: number, rateLimitHeaders: Record<string, string> = {}, roundsUsage?: TokenUsage): void {
    const totals = run.loop?.totals;
    const cost = formatCost(roundsCost + (totals?.toolCost ?? 0));
    const { sink } = run;
    if (sink?.opened) {
      if (failure) recorder.fail(openAiErrorBody(failure).error, responsesUsage(roundsUsage ?? totals!.usage, totals!.reasoningTokens));
      return sink.end(cost);
    }
    // refused before any model round started: a plain HTTP error, streaming or not
    if (failure) return sendError(res, failure, OPENAI_ERRORS);
    const headers: Record<string, string> = { ...rateLimitHeaders, [COST_HEADER]: cost, ...(totals?.deploymentId ? { [MODEL_ID_HEADER]: totals.deploymentId } : {}) };
    if (sink) {
      // a stream whose loop ended before any model round was accepted (e.g. the time limit)
      sink.open(headers);
      return sink.end(cost);
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(200).json(run.response);
  }
}

/** One request's state while it runs. */
interface Run {
  req: Request;
  body: ResponsesRequest;
  startedAt: number;
  deadline: number;
  /** aborted when the client goes away or the time limit passes */
  signal: AbortSignal;
  /** the time limit passed while the client is still there */
  timedOut(): boolean;
  sink?: SseSink;
  response: ResponseObject;
  loop?: ToolLoop;
}

/**
 * The calls waiting for approval that this request settles: those of the previous response (answered or
 * not: an unanswered one counts as not approved) and approval requests sent back in the input. An answer
 * to an approval request the gateway does not know is an error.
 */
function approvalsToSettle(pending: PendingApproval[], input: TranslatedInput): ApprovalToSettle[] {
  const known = new Set([...pending.map((p) => p.approvalRequestId), ...input.answered.map((a) => a.pending.approvalRequestId)]);
  const stray = input.answers.find((a) => !known.has(a.approvalRequestId));
  if (stray) throw new InvalidRequestError(`No pending approval request with id '${stray.approvalRequestId}'.`, 'approval_request_not_found', { param: 'input' });
  return [
    ...pending.map((p) => ({ pending: p, answer: input.answers.find((a) => a.approvalRequestId === p.approvalRequestId) })),
    ...input.answered.map(({ pending: p, answer, message }) => ({ pending: p, answer, message })),
  ];
}

/** The request schema (request-schema.ts), before anything is translated. */
function validateRequest(raw: unknown): ResponsesRequest {
  const body = requireObjectBody(raw);
  responsesRequestValidator.check(body);
  return body as ResponsesRequest;
}

/**
 * The request's tools as the response repeats them, without the credentials an `mcp` entry may carry
 * (`authorization`, `headers` values): a response is read back, streamed, logged by clients and stored,
 * and OpenAI leaves them out of it too. This gateway does not send them anywhere (its MCP calls carry the
 * operator's credentials and the client's `x-mcp-<alias>-<header>` headers), so they are dropped, and
 * `headers` keeps only its names.
 */
function echoedTools(tools: ResponsesRequest['tools']): ToolEntry[] {
  if (!tools) return [];
  return tools.map((tool) => {
    if (tool.type !== 'mcp' || (!('authorization' in tool) && !('headers' in tool))) return tool;
    const { authorization: _authorization, headers, ...rest } = tool as McpToolEntry & { authorization?: unknown };
    if (headers === undefined || headers === null || typeof headers !== 'object') return headers === undefined ? rest : { ...rest, headers };
    return { ...rest, headers: Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED])) };
  });
}

const REDACTED = '***';

function initialResponse(body: ResponsesRequest, createdAt: number): ResponseObject {
  return {
    id: newId('resp'),
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    max_tool_calls: typeof body.max_tool_calls === 'number' ? body.max_tool_calls : null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: echoedTools(body.tools),
    usage: null,
    metadata: body.metadata ?? {},
    ...(body.user !== undefined ? { user: body.user } : {}),
  };
}
