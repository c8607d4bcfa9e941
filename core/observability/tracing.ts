import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { requestAttributes, resultAttributes, rootSpanName } from './span-attributes';
import type { TraceExport } from './trace-export';
import type { GatewayContext } from '../pipeline/context';
import type { Outcome } from '../pipeline/stage';

const propagator = new W3CTraceContextPropagator();

/** Inbound headers are lower-cased already (InboundInfo). */
const headerGetter: TextMapGetter<Readonly<Record<string, string | string[] | undefined>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (Object.hasOwn(carrier, key) ? carrier[key] : undefined),
};

/**
 * OpenTelemetry tracing of one gateway instance: its own tracer provider (not the global one, so
 * in-process gateways and embedders keep theirs), spans exported in batches over OTLP/HTTP. Only built
 * when export is configured: when it is off no span, context or header is ever made.
 */
export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(
    config: TraceExport,
    /** is this a configured model name? (only such a name is part of a span's name) */
    private readonly isModel: (name: string) => boolean = () => false,
    exporter: SpanExporter = exporterFor(config),
  ) {
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer('model-gateway');
  }

  /**
   * The trace of one exchange: a child exchange continues its parent's current stage; a top-level
   * request continues the client's W3C `traceparent`, if it sent one. A /mcp message is a child of its
   * HTTP request, which has no span: its exchange is the request the client sees (a server span).
   */
  start(ctx: GatewayContext): RequestTrace {
    const traced = ctx.parent?.trace?.current;
    const parent = traced ?? propagator.extract(ROOT_CONTEXT, ctx.inbound.headers, headerGetter);
    const span = this.tracer.startSpan(rootSpanName(ctx, this.isModel), { kind: traced ? SpanKind.INTERNAL : SpanKind.SERVER, attributes: requestAttributes(ctx) }, parent);
    return new RequestTrace(this.tracer, span, trace.setSpan(parent, span), !traced, this.isModel);
  }

  /** Export what is still buffered and stop (gateway close). */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

function exporterFor(config: TraceExport): SpanExporter {
  return config.protocol === 'http/json' ? new OtlpJsonExporter({ url: config.url }) : new OtlpProtobufExporter({ url: config.url });
}

/** A span the gateway opened for some work, with the headers that continue it upstream. */
export class WorkSpan {
  constructor(
    private readonly span: Span,
    private readonly context: Context,
  ) {}

  /** `traceparent` (and `tracestate`) naming this span as the parent of the upstream's work */
  headers(): Record<string, string> {
    const carrier: Record<string, string> = {};
    propagator.inject(this.context, carrier, { set: (c, k, v) => (c[k] = v) });
    return carrier;
  }

  set(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  /** End it; an `errorType` (a gateway error code) marks it failed. */
  end(errorType?: string, attributes?: Attributes): void {
    if (attributes) this.span.setAttributes(attributes);
    if (errorType) {
      this.span.setAttribute('error.type', errorType);
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * The spans of one exchange: the request span, a child per pipeline stage run (the driver opens them,
 * core/pipeline/run-pipeline.ts), and under the stage running at the time, one per upstream attempt or
 * MCP upstream call.
 */
export class RequestTrace {
  private stage: Span | undefined;
  /** the running stage's context, made only when something opens a span under it */
  private stageContext: Context | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly root: Span,
    private readonly rootContext: Context,
    /** the root is a server span (the request the client sees), not a child exchange's */
    private readonly server = false,
    private readonly isModel: (name: string) => boolean = () => false,
  ) {}

  /** the context new spans go under: the running stage's, else the request's */
  get current(): Context {
    if (!this.stage) return this.rootContext;
    return (this.stageContext ??= trace.setSpan(this.rootContext, this.stage));
  }

  get traceId(): string {
    return this.root.spanContext().traceId;
  }

  /** A stage's run begins: spans opened until it ends are its children. */
  beginStage(name: string): Span {
    const span = this.tracer.startSpan(`stage ${name}`, { attributes: { 'gateway.stage': name } }, this.rootContext);
    this.stage = span;
    this.stageContext = undefined;
    return span;
  }

  endStage(span: Span, error?: unknown): void {
    if (error !== undefined) {
      const code = (error as { code?: unknown })?.code;
      span.setAttribute('error.type', typeof code === 'string' ? code : 'error');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
    this.stage = undefined;
    this.stageContext = undefined;
  }

  /** A client span under the running stage (an upstream attempt, an MCP upstream call). */
  client(name: string, attributes: Attributes): WorkSpan {
    const parent = this.current;
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    return new WorkSpan(span, trace.setSpan(parent, span));
  }

  /** The exchange is over (settled): what it used and cost, how it ended. */
  end(ctx: GatewayContext, outcome: Outcome): void {
    this.root.setAttributes(resultAttributes(ctx, outcome));
    // a tool's name is known to be a registered one only once the route stage found it
    this.root.updateName(rootSpanName(ctx, this.isModel));
    if (outcome.error || outcome.status >= 500) {
      this.root.setAttribute('error.type', outcome.error?.code ?? String(outcome.status));
      // OpenTelemetry's HTTP conventions leave a server span's status unset for a 4xx: the client's
      // fault (a bad body, an unknown model, a spent budget, a client gone) is no failure of the gateway,
      // and error-rate views built on span status would page for it
      if (!this.server || outcome.status >= 500) this.root.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.root.end();
  }
}

