import { setMaxListeners } from 'node:events';
import { answerBeforeEnd, answerInJson, boundedEvents, unansweredResumption } from './answer-before-end';

/**
 * A `fetch` for one MCP connection that closes the HTTP request of a JSON-RPC request the client gave up.
 *
 * Why: the MCP SDK 1.x client gives up a request (its caller's signal: the gateway's client went away;
 * or its timeout) by sending `notifications/cancelled` and dropping the answer, but the request's POST
 * stays open until the upstream answers. A tool that never answers then holds one of the upstream pool's
 * connections for good: 128 such calls, from any key, left every later call to that server waiting. The
 * SDK 2.x client closes the POST itself; it gets this wrapper too, for the answers checked below.
 *
 * Each POST that carries a request is sent with a signal of its own, aborted when the connection's
 * signal is (the SDK's close) or when a `notifications/cancelled` for its id goes out. It is forgotten
 * when its answer has been read: at once for a JSON answer (read whole by the gateway's own fetch), at
 * the end of the stream for an event-stream answer (the SDK reads it later). One wrapper a connection:
 * request ids are the SDK client's own, counted per connection. Each answer is also checked for the
 * request's result (answer-before-end.ts): both SDKs' clients otherwise wait out their timeout for it.
 */
export function abortCancelledRequests(inner: typeof fetch): typeof fetch {
  const open = new Map<string | number, AbortController>();
  const widened = new WeakSet<AbortSignal>();
  /** the request each broken, numbered event stream answers, by its last event id (answer-before-end.ts) */
  const resuming = new Map<string, string | number>();
  const resumable = (id: string | number) => (lastEventId: string) => resuming.set(lastEventId, id);
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const lastEventId = init.method === 'GET' ? new Headers(init.headers).get('last-event-id') : null;
    const resumed = lastEventId !== null ? resuming.get(lastEventId) : undefined;
    if (lastEventId !== null && resumed !== undefined) {
      resuming.delete(lastEventId);
      let response: Response;
      try {
        response = await inner(input, init);
      } catch {
        return unansweredResumption(resumed, init.signal ?? undefined);
      }
      if (!response.ok || !response.body || !isEventStream(response)) {
        await response.body?.cancel().catch(() => undefined);
        return unansweredResumption(resumed, init.signal ?? undefined);
      }
      return new Response(answerBeforeEnd(response.body, resumed, init.signal ?? new AbortController().signal, resumable(resumed)), initOf(response));
    }
    const message = init.method === 'POST' && typeof init.body === 'string' ? jsonRpcMessage(init.body) : undefined;
    if (message?.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') open.get(id)?.abort(new Error('The gateway cancelled this request.'));
    }
    if (init.method === 'GET') {
      const response = await inner(input, init);
      return response.body && isEventStream(response) ? new Response(boundedEvents(response.body), initOf(response)) : response;
    }
    // a request of ours has a method: the client's answer to the upstream's own request (a ping, sampling,
    // roots) carries the upstream's id, which may be one of ours too, and must not take its place here
    const id = typeof message?.method === 'string' ? message.id : undefined;
    if (typeof id !== 'string' && typeof id !== 'number') return inner(input, init);

    const own = new AbortController();
    const outer = init.signal ?? undefined;
    const onOuterAbort = () => own.abort(outer?.reason);
    if (outer && !widened.has(outer)) {
      // the SDK shares one signal between all requests of a connection; each open request listens to it
      setMaxListeners(0, outer);
      widened.add(outer);
    }
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    open.set(id, own);
    const forget = () => {
      if (open.get(id) === own) open.delete(id);
      outer?.removeEventListener('abort', onOuterAbort);
    };
    let response: Response;
    try {
      response = await inner(input, { ...init, signal: own.signal });
    } catch (err) {
      forget();
      throw err;
    }
    if (!response.body || !isEventStream(response)) {
      forget();
      // an error status fails the request in the SDK at once; an answer in JSON must be the answer to id
      return response.ok && isJson(response) ? answerInJson(response, id, initOf(response)) : response;
    }
    return new Response(untilDone(answerBeforeEnd(response.body, id, own.signal, resumable(id)), forget), initOf(response));
  };
}

/** A JSON-RPC message's envelope, or undefined for anything else (a batch, text that is not JSON). */
function jsonRpcMessage(body: string): { id?: unknown; method?: unknown; params?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { id?: unknown; method?: unknown; params?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json');
}

/** What a Response made in place of `response` keeps of it. */
function initOf(response: Response): ResponseInit {
  return { status: response.status, statusText: response.statusText, headers: headersOf(response) };
}

/** The answer's headers as a `Headers` (the gateway's own fetch answers with a lighter object of its own). */
function headersOf(response: Response): Headers {
  const given: { forEach(callback: (value: string, name: string) => void): void } = response.headers;
  if (given instanceof Headers) return given;
  const headers = new Headers();
  given.forEach((value, name) => headers.append(name, value));
  return headers;
}

/** The same stream, calling `done` once it has ended, failed or been cancelled by its reader. */
function untilDone(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = await reader.read();
        if (read.done) {
          done();
          controller.close();
        } else controller.enqueue(read.value);
      } catch (err) {
        done();
        controller.error(err);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
}
