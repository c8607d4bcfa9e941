import { ConfigError } from '../errors/gateway-error';
import type { Tracing } from './tracing';

/** Where and how spans are exported, from the standard OTEL_* variables; undefined = tracing is off. */
export interface TraceExport {
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
}

/**
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), with
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL (default http/protobuf, as the specification says) and
 * OTEL_SERVICE_NAME. OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off.
 */
export function traceExportFromEnv(env: NodeJS.ProcessEnv): TraceExport | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim() === 'none') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!traces && !base) return undefined;
  const url = traces || `${base!.replace(/\/+$/, '')}/v1/traces`;
  // an empty variable is an unset one (the OpenTelemetry specification): a deployment template that leaves
  // OTEL_EXPORTER_OTLP_TRACES_PROTOCOL blank refused the start, or hid OTEL_EXPORTER_OTLP_PROTOCOL
  const tracesProtocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim();
  const protocol = tracesProtocol || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    // the variable the value came from: the refusal named OTEL_EXPORTER_OTLP_PROTOCOL whichever it was
    throw new ConfigError(tracesProtocol ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL', `"${protocol}" is not supported: use http/protobuf or http/json`);
  }
  // the scheme too: `collector:4318` (no scheme) parses as a URL of scheme "collector:", and every span
  // was then exported to nowhere, silently, while the access log showed trace ids
  let scheme: string | undefined;
  try {
    scheme = new URL(url).protocol;
  } catch {
    scheme = undefined;
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    throw new ConfigError(traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT', 'must be an http(s) URL');
  }
  return { url, protocol, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'model-gateway' };
}

/**
 * The tracing of one gateway, or undefined when export is off. The OpenTelemetry SDK and the OTLP
 * exporters (./tracing) are required here, only when export is configured, so that a gateway without
 * tracing never loads them: they are several MiB of heap that would sit idle.
 */
export function startTracing(config: TraceExport | undefined, isModel: (name: string) => boolean): Tracing | undefined {
  if (!config) return undefined;
  const { Tracing: TracingClass } = require('./tracing') as typeof import('./tracing');
  return new TracingClass(config, isModel);
}
