import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The trace headers (`traceparent`, `tracestate`) of the upstream call in progress, for code that sends
 * it but has no context to read them from: an MCP transport plugin's HTTP requests happen inside the SDK
 * client, on a connection shared by every request to that server, so the headers cannot be fixed when
 * it connects. Set only while tracing is on; otherwise nothing is ever stored and the read is a no-op.
 */
const current = new AsyncLocalStorage<Readonly<Record<string, string>>>();

export function withTraceHeaders<T>(headers: Readonly<Record<string, string>> | undefined, work: () => T): T {
  return headers ? current.run(headers, work) : work();
}

/** The headers that continue the current trace upstream, or undefined (tracing off, no traced call). */
export function outboundTraceHeaders(): Readonly<Record<string, string>> | undefined {
  return current.getStore();
}
