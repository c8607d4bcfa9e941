import { randomUUID } from 'node:crypto';
import type { ApiFormat, InboundInfo } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';
import type { TokenUsage } from '../types/usage';
import { emptyUsage } from '../types/usage';
import type { Deployment } from '../routing/deployment';
import type { TimeoutsConfig } from '../config/types';
import type { Principal } from '../auth/principal';
import type { GuardrailRecord } from '../guardrails/guardrail-record';
import type { GatewayError } from '../errors/gateway-error';
import type { McpExchange, McpScope } from '../apis/mcp/mcp-exchange';
import type { LimitTicket } from '../limits/admission';
import type { ParentWork } from './parent-traffic';
import type { RequestTrace } from '../observability/tracing';
import { ClientSignal } from './client-signal';

/**
 * The kind of work a context carries; it picks the traffic strategy every stage delegates to
 * (core/pipeline/traffic.ts). `responses` is a parent exchange whose call runs child exchanges.
 */
export type Traffic = 'model' | 'mcp' | 'responses';

/** The model response in the client's format: a JSON body or a stream of SSE frames. */
export interface ModelResult {
  status: number;
  body?: unknown;
  /** the upstream's exact bytes when `body` is an unchanged pass-through; cleared by anyone who edits `body` */
  rawBody?: string;
  stream?: AsyncIterable<SseFrame>;
  /** extra headers to send the client (e.g. rate-limit headers) */
  headers: Record<string, string>;
}

export interface ModelExchange {
  /** the API shape of `body` and of the result (the client's format) */
  readonly format: ApiFormat;
  /** the request body in `format`'s shape; stages may rewrite it (guardrail masking) */
  body: any;
  /**
   * The client's text `body` was parsed from, while `body` is that parse unchanged: cleared by anyone who
   * edits `body`, as `ModelResult.rawBody` is. A provider passes it on instead of serialising the body
   * again (InboundInfo.bodyText).
   */
  bodyText?: string;
  /** the body's size as the client sent it (content-length): the usage estimate needs no re-serialising */
  bodyBytes?: number;
  readonly requestedModel: string;
  readonly stream: boolean;
  /** the deployments to try, in order (route stage; fallbacks after the first) */
  candidates: Deployment[];
  /** the request's own timeouts (x-gateway-timeout; route stage) */
  timeouts?: TimeoutsConfig;
  /** the deployment that served (or is serving) the request */
  deployment?: Deployment;
  result?: ModelResult;
  /** attempts made by the call stage, for the log */
  attempts: { deploymentId: string; status: number | null; error?: string }[];
  /** of `attempts`, those never sent: a deployment whose provider cannot express the request (skipped) */
  unsentAttempts?: number;
  /** the deployment whose stream is being passed on: its attempt is counted when the stream has ended */
  streamingFrom?: string;
}

/**
 * How a child's log entry is written. `own`: the child has an entry of its own (a tool call, `MCP: <tool>`);
 * `fold`: the child's usage, cost and guardrail records are added to its parent's entry (a Responses
 * model round), so the request log has one entry for the response.
 */
export type ChildLog = 'own' | 'fold';

/**
 * The typed state of one request as it crosses the pipeline. Each stage fills its own slot; nothing is
 * an untyped bag, and no state between stages lives outside the context.
 */
export class GatewayContext {
  /** the raw credential(s) the endpoint found, first known one wins; cleared once auth has checked them */
  credential: string | readonly (string | undefined)[] | undefined;
  principal?: Principal;
  model?: ModelExchange;
  mcp?: McpExchange;
  /** the MCP servers and tools the principal may reach (scope stage); children inherit it */
  mcpScope?: McpScope;
  /** a parent exchange's own work (a Responses request: the tool loop), run by its call stage */
  parentWork?: ParentWork;
  usage: TokenUsage = emptyUsage();
  cost = 0;
  guardrails: GuardrailRecord[] = [];
  /** structured facts stages add to the log entry (never secrets) */
  readonly logDetails: Record<string, unknown> = {};
  /** headers the stages want on the response */
  readonly responseHeaders: Record<string, string> = {};

  /**
   * A body the endpoint refused (core/http/model-endpoint.ts refuseBody): answered right after the key
   * check, so it is logged and counted as the key's request, and a caller without a key learns nothing of it
   */
  refusal?: GatewayError;

  /** the exchange this one runs for (a Responses round or tool call, the model call behind gateway_proxy) */
  parent?: GatewayContext;
  /** how this child's log entry is written (children only) */
  childLog: ChildLog = 'own';
  /** fold children: how many folded into this entry (a Responses parent's `rounds`) */
  foldedChildren = 0;
  /** fold children: their upstream attempts, retries and fallbacks included (the parent's access line) */
  foldedAttempts = 0;
  /**
   * fold children: the part of `cost` they added. Each settled its own budget reservation to it, so the
   * parent's reservation (a gateway_proxy call's fee) settles to the rest, or the model is charged twice.
   */
  foldedCost = 0;
  /** the deployment of the first folded child (a Responses parent's entry names it) */
  firstDeploymentId?: string;
  /** a child's first streamed frame was timed (gateway_time_to_first_token_seconds: once per request) */
  firstFrameTimed = false;

  // --- pipeline bookkeeping (core/pipeline/run-pipeline.ts) ---
  /** how many stages' `run` started; settle walks them back */
  stagesStarted = 0;
  /** counted among the pipeline's unsettled requests */
  counted = false;

  // --- slots that carry state from a stage's run to its settle ---
  /** ends the serving deployment's in-flight count (call stage) */
  endInFlight?: () => void;
  /** budget and rate-limit reservations to settle to the real figures (call stage, core/limits) */
  limits?: LimitTicket;

  // --- observability (core/observability) ---
  /** the exchange's spans; only when tracing is on */
  trace?: RequestTrace;

  constructor(
    readonly traffic: Traffic,
    /** "chat", "embeddings", "messages", "images", "responses", "mcp", ... */
    readonly endpoint: string,
    readonly startedAt: number,
    readonly inbound: InboundInfo,
    /** aborted when the client disconnects (an AbortSignal given here is followed) */
    client: ClientSignal | AbortSignal,
    /** sent as x-gateway-request-id and logged */
    readonly requestId: string = randomUUID(),
  ) {
    this.clientSignal = client instanceof ClientSignal ? client : ClientSignal.of(client);
  }

  /** the client going away, for the request's own work (cheap to check and to listen to) */
  readonly clientSignal: ClientSignal;

  /** the client going away as an AbortSignal, for APIs that take one (made on first use) */
  get signal(): AbortSignal {
    return this.clientSignal.signal;
  }

  /**
   * A child exchange: it inherits this context's principal (the auth stage signs it in without a second
   * credential check) and, for MCP, its scope; its own stages run in full.
   */
  child(traffic: Traffic, childLog: ChildLog, startedAt: number, signal: ClientSignal | AbortSignal, requestId: string = randomUUID()): GatewayContext {
    const child = new GatewayContext(traffic, this.endpoint, startedAt, this.inbound, signal, requestId);
    child.parent = this;
    child.childLog = childLog;
    return child;
  }

  /** The model exchange; throws if a stage runs on the wrong kind of traffic (a programming error). */
  get modelExchange(): ModelExchange {
    if (!this.model) throw new Error(`${this.endpoint}: no model exchange on this context`);
    return this.model;
  }

  /** The MCP exchange; throws if a stage runs on the wrong kind of traffic (a programming error). */
  get mcpExchange(): McpExchange {
    if (!this.mcp) throw new Error(`${this.endpoint}: no MCP exchange on this context`);
    return this.mcp;
  }
}

/** A context after the auth stage: the principal is known (stages after auth take this type). */
export type AuthedContext = GatewayContext & { readonly principal: Principal };
