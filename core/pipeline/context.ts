import { randomUUID } from 'node:crypto';
import type { ApiFormat, InboundInfo } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';
import type { TokenUsage } from '../types/usage';
import { emptyUsage } from '../types/usage';
import type { Deployment } from '../routing/deployment';
import type { Principal } from '../auth/principal';
import type { GuardrailRecord } from '../guardrails/guardrail-record';
import type { McpExchange } from '../apis/mcp/mcp-exchange';
import type { LogEntry } from '../store/log-entry';

export type Traffic = 'model' | 'mcp';

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
  readonly requestedModel: string;
  readonly stream: boolean;
  /** the deployments to try, in order (route stage; fallbacks after the first) */
  candidates: Deployment[];
  /** the deployment that served (or is serving) the request */
  deployment?: Deployment;
  result?: ModelResult;
  /** attempts made by the call stage, for the log */
  attempts: { deploymentId: string; status: number | null; error?: string }[];
}

/**
 * The typed state of one request as it crosses the pipeline. Each stage fills its own slot; nothing is
 * an untyped bag.
 */
export class GatewayContext {
  /** the raw credential the endpoint found (key header); cleared once auth has checked it */
  credential: string | undefined;
  principal?: Principal;
  model?: ModelExchange;
  mcp?: McpExchange;
  usage: TokenUsage = emptyUsage();
  cost = 0;
  guardrails: GuardrailRecord[] = [];
  /** structured facts stages add to the log entry (never secrets) */
  readonly logDetails: Record<string, unknown> = {};
  /** headers the stages want on the response */
  readonly responseHeaders: Record<string, string> = {};
  /**
   * Set by an endpoint that makes several pipeline passes for one client request (the Responses tool
   * loop): the spend stage hands its log entry here instead of writing it, and the endpoint writes one
   * entry for the whole request.
   */
  logCollector?: (entry: LogEntry) => void;

  constructor(
    readonly traffic: Traffic,
    /** "chat", "embeddings", "messages", "images", "responses", "mcp", ... */
    readonly endpoint: string,
    readonly startedAt: number,
    readonly inbound: InboundInfo,
    /** aborted when the client disconnects */
    readonly signal: AbortSignal,
    /** sent as x-gateway-request-id and logged */
    readonly requestId: string = randomUUID(),
  ) {}

  /** The model exchange; throws if a stage runs on the wrong kind of traffic (a programming error). */
  get modelExchange(): ModelExchange {
    if (!this.model) throw new Error(`${this.endpoint}: no model exchange on this context`);
    return this.model;
  }
}
