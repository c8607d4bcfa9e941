/**
 * `POST /v1/responses`: a Responses request translated to canonical chat rounds (so every provider
 * serves it), with the gateway-run MCP tool loop. Answers JSON or a Responses event stream; the cost of
 * every model round and tool call adds up in `x-gateway-response-cost` (a trailer when streaming). The
 * request log gets one entry for the response (the model rounds) plus one per tool call.
 */
import type { Request, Response } from 'express';
import { AuthenticationError, InvalidRequestError, NotFoundError, PermissionError, toGatewayError, type GatewayError } from '../errors/gateway-error';
import { bearerToken, providerVisibleHeaders } from '../http/credentials';
import { OPENAI_ERRORS, sendError } from '../http/error-shapes';
import type { GatewayServices } from '../http/gateway-services';
import { MODEL_ID_HEADER } from '../http/model-endpoint';
import { requireObjectBody, requireString, optionalBoolean, optionalNumber } from '../http/validate';
import { gatewayProxyFor } from '../mcp/gateway-proxy';
import { MCP_GATEWAY, type McpGateway } from '../mcp/mcp-gateway';
import type { InboundHeaders } from '../mcp/upstream-headers';
import type { Principal } from '../auth/principal';
import { COST_HEADER } from '../stages/spend';
import { formatCost } from '../spend/pricing';
import type { LogEntry } from '../store/log-entry';
import { newId } from './ids';
import { inputToMessages } from './input-to-messages';
import { mcpEntries, resolveMcpTools } from './mcp-tool-set';
import { responsesUsage } from './output-items';
import { chatTemplate, instructionMessages } from './request-to-chat';
import { ResponseRecorder } from './response-recorder';
import { ResponseStateStore } from './response-state-store';
import type { ResponseObject, ResponsesRequest } from './responses-types';
import { SseSink } from './sse-sink';
import { ToolLoop, type ApprovalToSettle } from './tool-loop';

export class ResponsesHandler {
  private readonly states: ResponseStateStore;
  private readonly mcp?: McpGateway;

  constructor(private readonly services: GatewayServices) {
    this.states = new ResponseStateStore(services.store);
    this.mcp = services.container.isRegistered(MCP_GATEWAY) ? services.container.resolve<McpGateway>(MCP_GATEWAY) : undefined;
  }

  async handle(req: Request, res: Response): Promise<void> {
    const { services } = this;
    const startedAt = services.clock.now();
    const requestId = res.locals.requestId as string;
    let body: ResponsesRequest;
    try {
      body = validateRequest(req.body);
    } catch (err) {
      return sendError(res, toGatewayError(err), OPENAI_ERRORS);
    }
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', onClose);

    // the time limit also stops work in flight (between steps the loop checks the clock itself)
    const timeUp = new AbortController();
    const limitMs = services.config.responses.timeLimitSeconds * 1000;
    const timer = setTimeout(() => timeUp.abort(), limitMs);
    timer.unref?.();
    const signal = AbortSignal.any([abort.signal, timeUp.signal]);

    const collected: LogEntry[] = [];
    const stream = body.stream === true;
    const sink = stream ? new SseSink(res, abort.signal) : undefined;
    const response = initialResponse(body, Math.floor(startedAt / 1000));
    const recorder = new ResponseRecorder(response, sink?.listener);
    let principal: Principal | undefined;
    let loop: ToolLoop | undefined;
    let failure: GatewayError | undefined;
    try {
      const credential = bearerToken(req.headers.authorization);
      principal = await this.authenticate(credential);
      const template = chatTemplate(body);
      const entries = mcpEntries(body.tools);
      const previous = body.previous_response_id ? await this.states.load(body.previous_response_id, principal.keyId) : undefined;
      if (body.previous_response_id && !previous) {
        throw new NotFoundError(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_not_found', { param: 'previous_response_id' });
      }
      const input = inputToMessages(body.input);
      const messages = [...(previous?.messages ?? [])];
      const approvals: ApprovalToSettle[] = [
        ...(previous?.pending ?? []).map((pending) => ({ pending, answer: input.answers.find((a) => a.approvalRequestId === pending.approvalRequestId) })),
        ...input.answered.map(({ pending, answer, message }) => ({ pending, answer, message })),
      ];
      if (messages.length === 0 && input.messages.length === 0) {
        throw new InvalidRequestError("Missing required parameter: 'input'.", 'missing_required_parameter', { param: 'input' });
      }
      const mcpHeaders = mcpHeadersOf(req.headers);
      const proxy = gatewayProxyFor(services);
      const toolSet = entries.length > 0 ? await resolveMcpTools(entries, principal, mcpHeaders, { mcp: this.mcp, proxy }) : undefined;

      recorder.start();
      const inbound = { headers: providerVisibleHeaders(req.headers) };
      loop = new ToolLoop(
        {
          clock: services.clock,
          drain: () => sink?.drain() ?? Promise.resolve(),
          round: {
            pipeline: services.pipeline,
            clock: services.clock,
            credential,
            inbound,
            signal,
            collect: (entry) => collected.push(entry),
            accepted: (deploymentId) => sink?.open({ [MODEL_ID_HEADER]: deploymentId }),
          },
          tools: { pipeline: services.pipeline, clock: services.clock, proxy, credential, inbound, mcpHeaders: toolSet?.callHeaders ?? {}, signal, responseId: response.id },
        },
        recorder,
        { maxToolRounds: services.config.responses.maxToolRounds, deadline: startedAt + limitMs },
      );
      const result = await loop.run({ template, instructions: instructionMessages(body), messages, newMessages: input.messages, toolSet, approvals, stream });
      recorder.finish(responsesUsage(loop.totals.usage, loop.totals.reasoningTokens), result.incomplete);
      if (body.store !== false) {
        await this.states.save(response.id, { keyId: principal.keyId, model: body.model, messages, pending: result.pending });
      }
    } catch (err) {
      if (timeUp.signal.aborted && !abort.signal.aborted && loop) {
        recorder.finish(responsesUsage(loop.totals.usage, loop.totals.reasoningTokens), 'time_limit');
      } else {
        failure = toGatewayError(err);
      }
      if (failure?.status === 500) services.logger.error('responses request failed', { requestId, error: (err as Error)?.message });
    } finally {
      clearTimeout(timer);
      res.off('close', onClose);
    }

    const totals = loop?.totals;
    const cost = (totals?.modelCost ?? 0) + (totals?.toolCost ?? 0);
    const aborted = abort.signal.aborted;
    const status = aborted ? 499 : failure ? failure.status : 200;
    await this.writeLog(requestId, startedAt, principal, body, collected, status, failure, aborted, response, totals?.toolCalls ?? 0);

    const headers = { [MODEL_ID_HEADER]: totals?.deploymentId ?? '', [COST_HEADER]: formatCost(cost) };
    if (!totals?.deploymentId) delete (headers as Record<string, string>)[MODEL_ID_HEADER];
    if (aborted) return void res.end();
    if (sink?.opened) {
      if (failure) recorder.fail({ code: failure.code, message: failure.message, param: failure.param }, responsesUsage(totals!.usage, totals!.reasoningTokens));
      return sink.end(formatCost(cost));
    }
    if (failure) return sendError(res, failure, OPENAI_ERRORS);
    if (sink) {
      // a stream whose loop ended before any model round was accepted (e.g. the time limit)
      sink.open(headers);
      return sink.end(formatCost(cost));
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(200).json(response);
  }

  private async authenticate(credential: string | undefined): Promise<Principal> {
    const principal = await this.services.keys.authenticate(credential);
    if (!principal) throw new AuthenticationError(credential ? 'Invalid API key.' : 'Missing API key.');
    if (principal.role === 'platform_admin') throw new PermissionError('The admin key is for the management API; use a virtual key for model requests.', 'admin_key_not_allowed');
    return principal;
  }

  /** One entry for the response: the model rounds summed (each tool call has its own entry). */
  private async writeLog(
    requestId: string,
    startedAt: number,
    principal: Principal | undefined,
    body: ResponsesRequest,
    rounds: LogEntry[],
    status: number,
    failure: GatewayError | undefined,
    aborted: boolean,
    response: ResponseObject,
    toolCalls: number,
  ): Promise<void> {
    const guardrails = rounds.flatMap((r) => (r.details?.guardrails as unknown[]) ?? []);
    await this.services.requestLog.record({
      id: requestId,
      requestId,
      time: new Date(startedAt).toISOString(),
      keyId: principal?.keyId ?? null,
      org: principal?.org ?? null,
      endpoint: 'responses',
      model: body.model,
      deploymentId: rounds.find((r) => r.deploymentId)?.deploymentId ?? null,
      promptTokens: rounds.reduce((n, r) => n + r.promptTokens, 0),
      completionTokens: rounds.reduce((n, r) => n + r.completionTokens, 0),
      cost: rounds.reduce((n, r) => n + r.cost, 0),
      status,
      latencyMs: Math.max(0, this.services.clock.now() - startedAt),
      errorCode: failure?.code ?? null,
      outcome: aborted ? 'client_abort' : failure ? 'error' : 'ok',
      details: {
        responseId: response.id,
        rounds: rounds.length,
        toolCalls,
        ...(response.status === 'incomplete' ? { incomplete: response.incomplete_details?.reason } : {}),
        ...(guardrails.length ? { guardrails } : {}),
      },
    });
  }
}

function validateRequest(raw: unknown): ResponsesRequest {
  const body = requireObjectBody(raw);
  requireString(body, 'model');
  optionalBoolean(body, 'stream');
  optionalNumber(body, 'max_output_tokens');
  optionalNumber(body, 'temperature');
  if (body.input !== undefined && typeof body.input !== 'string' && !Array.isArray(body.input)) {
    throw new InvalidRequestError("Invalid type for 'input': expected a string or an array of items.", 'invalid_type', { param: 'input' });
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) throw new InvalidRequestError("Invalid type for 'tools': expected an array.", 'invalid_type', { param: 'tools' });
  if (body.previous_response_id != null && typeof body.previous_response_id !== 'string') {
    throw new InvalidRequestError("Invalid type for 'previous_response_id': expected a string.", 'invalid_type', { param: 'previous_response_id' });
  }
  return body as ResponsesRequest;
}

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
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    usage: null,
    metadata: body.metadata ?? {},
    ...(body.user !== undefined ? { user: body.user } : {}),
  };
}

/** The `x-mcp-*` request headers: server selection and per-user credentials for MCP servers. */
function mcpHeadersOf(headers: Request['headers']): InboundHeaders {
  const out: Record<string, string | string[] | undefined> = {};
  for (const name in headers) if (name.startsWith('x-mcp-')) out[name] = headers[name];
  return out;
}
