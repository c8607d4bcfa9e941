import type { IncomingMessage, ServerResponse } from 'node:http';
import { toGatewayError, type GatewayError } from '../errors/gateway-error';
import { GatewayContext, type AuthedContext } from '../pipeline/context';
import { ClientSignal } from '../pipeline/client-signal';
import type { Outcome } from '../pipeline/stage';
import type { Delivery } from '../pipeline/delivery';
import type { ApiFormat } from '../plugins/contracts';
import { COST_HEADER } from '../stages/spend';
import { EVENT_STREAM_HEADERS } from './event-stream-headers';
import { formatCost } from '../spend/pricing';
import type { SseFrame } from '../streaming/sse-frame';
import { batchesOf } from '../streaming/frame-batches';
import { ClientAbortError } from '../upstream/upstream-client';
import { providerVisibleHeaders } from './credentials';
import { onClientGone } from './client-gone';
import { sendError, type ErrorShape } from './error-shapes';
import type { GatewayServices } from './gateway-services';
import { requestIdOf } from './request-id';

export const MODEL_ID_HEADER = 'x-gateway-model-id';

/** What differs between model endpoints; the request/response mechanics are shared. */
export interface ModelEndpointSpec {
  /** log label: "chat", "messages", ... */
  endpoint: string;
  format: ApiFormat;
  errors: ErrorShape;
  /** the credential(s) the request carries; the auth stage checks them (several: the first it knows wins) */
  credential(req: IncomingMessage): GatewayContext['credential'];
  /** drop a frame the client did not ask for (it has been metered already) */
  skipFrame?(frame: SseFrame, body: any): boolean;
  /** extra headers on every answer of this endpoint (e.g. Deprecation) */
  headers?: Record<string, string>;
  /** finish a JSON result before it is written (images: host inline images as URLs); after the pipeline */
  finishResult?(ctx: GatewayContext, req: IncomingMessage): Promise<void>;
}

/**
 * Serve a model endpoint on the fast JSON path: validate the body (an error is answered in the endpoint's
 * shape, nothing reaches the pipeline), then run it.
 */
export function addModelRoute(services: GatewayServices, path: string, spec: ModelEndpointSpec, validate: (raw: unknown) => any): void {
  services.fastRoutes.add(
    path,
    spec.errors,
    async (req, res, raw, text) => {
      let body;
      try {
        body = validate(raw);
      } catch (err) {
        return refuseBody(services, spec, req, res, err, raw);
      }
      await runModelRequest(services, spec, req, res, body, body === raw ? text : undefined);
    },
    spec.headers,
    (req, res, error) => refuseBody(services, spec, req, res, error),
  );
}

/**
 * Answer a body the endpoint's schema refused, or could not read at all (not JSON, not sent as JSON, too
 * large). It runs through the pipeline and fails right after auth: a caller without a valid key gets the
 * 401 (or 403) and learns nothing about what the endpoint accepts, and the refusal is logged, counted and
 * traced like any other refused request (a client sending broken bodies showed nowhere but in its own
 * 400s). Only this error path pays for it; a valid body goes to the pipeline as it is. `raw`: the parsed
 * body, if any.
 */
export async function refuseBody(services: GatewayServices, spec: ModelEndpointSpec, req: IncomingMessage, res: ServerResponse, invalid: unknown, raw?: unknown): Promise<void> {
  // a client that went away mid-body is a client abort (499), as on any other request: logged as the
  // 400 `request_aborted` it was never sent, it showed as a client error in the log and the metrics
  const client = ClientSignal.create();
  const stopWatching = onClientGone(res, () => client.abort());
  const ctx = new GatewayContext('model', spec.endpoint, services.clock.now(), { headers: providerVisibleHeaders(req.headers) }, client, requestIdOf(res));
  ctx.credential = spec.credential(req);
  const model = typeof raw === 'object' && raw !== null && Object.hasOwn(raw, 'model') ? (raw as { model: unknown }).model : undefined;
  ctx.model = { format: spec.format, body: undefined, requestedModel: typeof model === 'string' ? model : '', stream: false, candidates: [], attempts: [] };
  ctx.refusal = toGatewayError(invalid);
  if (spec.headers) for (const [k, v] of Object.entries(spec.headers)) res.setHeader(k, v);
  try {
    await services.pipeline.execute(ctx, new HttpModelDelivery(spec, req, res));
  } finally {
    stopWatching();
  }
}

/**
 * Run one model request through the pipeline and write the answer: JSON, or SSE passed through frame by
 * frame with the cost as a trailer. The driver settles with how it ended; a client that goes away aborts
 * the upstream request. `bodyText`: the text `body` was parsed from, when `body` is that parse unchanged.
 */
export async function runModelRequest(services: GatewayServices, spec: ModelEndpointSpec, req: IncomingMessage, res: ServerResponse, body: any, bodyText?: string): Promise<void> {
  const client = ClientSignal.create();
  const stopWatching = onClientGone(res, () => client.abort());
  const ctx = new GatewayContext('model', spec.endpoint, services.clock.now(), { headers: providerVisibleHeaders(req.headers) }, client, requestIdOf(res));
  ctx.credential = spec.credential(req);
  const declared = Number(req.headers['content-length']);
  ctx.model = { format: spec.format, body, bodyText, bodyBytes: declared > 0 ? declared : undefined, requestedModel: body.model, stream: body.stream === true, candidates: [], attempts: [] };
  if (spec.headers) for (const [k, v] of Object.entries(spec.headers)) res.setHeader(k, v);
  try {
    await services.pipeline.execute(ctx, new HttpModelDelivery(spec, req, res));
  } finally {
    stopWatching();
  }
}

/** A model endpoint's answer: JSON, or the SSE stream with the cost trailer; errors in the endpoint's shape. */
class HttpModelDelivery implements Delivery {
  constructor(
    private readonly spec: ModelEndpointSpec,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  /** Returns how a stream ended (a JSON answer ends as it was sent). */
  async deliver(ctx: AuthedContext): Promise<Outcome | void> {
    const { spec, res } = this;
    const exchange = ctx.modelExchange;
    const result = exchange.result!;
    if (!result.stream && spec.finishResult) await spec.finishResult(ctx, this.req);
    res.setHeader(MODEL_ID_HEADER, exchange.deployment!.id);
    for (const k of Object.keys(ctx.responseHeaders)) res.setHeader(k, ctx.responseHeaders[k]);
    for (const k of Object.keys(result.headers)) res.setHeader(k, result.headers[k]);
    if (result.stream) return writeStream(ctx, spec, res, result.stream, exchange.body, ctx.clientSignal);
    res.statusCode = result.status;
    res.setHeader('content-type', 'application/json');
    res.end(result.rawBody ?? JSON.stringify(result.body));
    if (result.status !== 200) return { status: result.status, reason: 'ok' };
  }

  fail(_ctx: GatewayContext, error: GatewayError): void {
    sendError(this.res, error, this.spec.errors);
  }
}

async function writeStream(ctx: GatewayContext, spec: ModelEndpointSpec, res: ServerResponse, stream: AsyncIterable<SseFrame>, body: any, signal: ClientSignal): Promise<Outcome> {
  res.writeHead(200, { ...EVENT_STREAM_HEADERS, trailer: COST_HEADER });
  const out = new FrameBatcher(res);
  let outcome: Outcome = { status: 200, reason: 'ok' };
  try {
    // a batch at a time (the frames of one upstream read, or one frame from a per-frame stream)
    for await (const batch of batchesOf(stream)) {
      // a frame passing through unchanged is written as the upstream's bytes
      for (const frame of batch) if (!spec.skipFrame?.(frame, body)) out.pushFrame(frame);
      if (out.backpressure) await out.backpressure;
    }
    out.flush();
  } catch (err) {
    const error: GatewayError = toGatewayError(err);
    if (signal.aborted || error instanceof ClientAbortError) return { status: 499, error, reason: 'client_abort' };
    outcome = { status: error.status, error, reason: error.code === 'upstream_stream_cut' ? 'upstream_cut' : 'stream_error' };
    out.pushText(spec.errors.streamFrame(error));
    out.flush();
  }
  res.addTrailers({ [COST_HEADER]: formatCost(ctx.cost) });
  res.end();
  return outcome;
}

/**
 * Frames parsed from one upstream read arrive within the same turn of the event loop: write them as one
 * chunk at the end of that turn (setImmediate runs right after the I/O that produced them), instead of one
 * chunked-encoding write each. Nothing waits on a timer, and backpressure still holds the stream.
 */
class FrameBatcher {
  /** runs of frames as strings (built frames, joined) or bytes (frames passed through as they came) */
  private pending: (string | Uint8Array)[] = [];
  /**
   * The run of passed-through frames being gathered: frames from one upstream read sit side by side in
   * its buffer, so the run is one view of it, made when the run ends rather than one per frame.
   */
  private run: { src: Buffer; start: number; end: number } | undefined;
  private size = 0;
  private scheduled = false;
  /** set while the socket's buffer is full; settles on 'drain' (or when the client goes away) */
  private drain: Promise<void> | undefined;

  constructor(private readonly res: ServerResponse) {}

  /** A frame: the upstream's bytes when it passes through unchanged, else its text. */
  pushFrame(frame: SseFrame): void {
    const src = frame.wireSource;
    if (!src) return this.pushText(frame.toWire());
    const { run } = this;
    const start = frame.wireStart;
    const end = frame.wireEnd;
    if (run && run.src === src && run.end === start) run.end = end;
    else {
      this.endRun();
      this.run = { src, start, end };
    }
    this.added(end - start);
  }

  pushText(wire: string): void {
    this.endRun();
    const last = this.pending.length - 1;
    if (last >= 0 && typeof this.pending[last] === 'string') this.pending[last] += wire;
    else this.pending.push(wire);
    this.added(wire.length);
  }

  private added(size: number): void {
    this.size += size;
    if (this.size >= 64 * 1024) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  private endRun(): void {
    const { run } = this;
    if (!run) return;
    this.run = undefined;
    const { src, start, end } = run;
    this.pending.push(start === 0 && end === src.length ? src : src.subarray(start, end));
  }

  flush(): void {
    this.endRun();
    const { pending } = this;
    if (pending.length === 0 || this.res.destroyed) return;
    this.pending = [];
    this.size = 0;
    const accepted = this.res.write(pending.length === 1 ? pending[0] : Buffer.concat(pending.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))));
    if (!accepted && !this.drain) {
      this.drain = new Promise<void>((resolve) => {
        const done = () => {
          this.res.off('drain', done);
          this.res.off('close', done);
          this.drain = undefined;
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    }
  }

  /** A promise to wait on while the client is not keeping up; otherwise undefined. */
  get backpressure(): Promise<void> | undefined {
    return this.drain;
  }
}
