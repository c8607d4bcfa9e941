/**
 * A loopback OTLP/HTTP trace receiver (what a collector's `otlphttp` receiver does): POST /v1/traces with
 * `application/x-protobuf` (decoded with protobufjs from the OTLP trace proto, the subset below) or
 * `application/json`; every span received is kept, flattened with its service name.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** opentelemetry/proto/collector/trace/v1 and the messages it uses, as published (fields the tests read). */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: false }).root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client */
  kind: number;
  /** 2 = error */
  statusCode: number;
  attributes: Record<string, string | number | boolean>;
  service: string;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** the content types of the exports received */
  readonly contentTypes: string[] = [];
  url = '';
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Wait until a span matching `test` has arrived (the exporter sends in batches). */
  async waitFor(test: (s: ReceivedSpan) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(test);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no such span received; got: ${this.spans.map((s) => s.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The spans of one trace whose parent is `parent` */
  childrenOf(parent: ReceivedSpan): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const type = String(req.headers['content-type'] ?? '');
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    this.contentTypes.push(type);
    try {
      const decoded = type.includes('json') ? JSON.parse(body.toString('utf8')) : ExportRequest.toObject(ExportRequest.decode(body), { longs: Number, bytes: String });
      this.collect(decoded, type.includes('json') ? 'json' : 'protobuf');
      res.writeHead(200, { 'content-type': type }).end(type.includes('json') ? '{}' : '');
    } catch (err) {
      res.writeHead(400).end(String(err));
    }
  }

  private collect(request: any, encoding: 'json' | 'protobuf'): void {
    // JSON: ids are hex strings; protobuf (decoded with bytes: String): base64
    const id = (v: unknown) => (typeof v !== 'string' || v === '' ? '' : encoding === 'json' ? v : Buffer.from(v, 'base64').toString('hex'));
    for (const rs of request.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          this.spans.push({
            traceId: id(span.traceId),
            spanId: id(span.spanId),
            parentSpanId: id(span.parentSpanId),
            name: span.name,
            kind: Number(span.kind ?? 0),
            statusCode: Number(span.status?.code ?? 0),
            attributes: attributesOf(span.attributes),
            service: String(resource['service.name'] ?? ''),
          });
        }
      }
    }
  }
}

function attributesOf(list: any[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = Object.create(null);
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    out[kv.key] = v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;
  }
  return out;
}
