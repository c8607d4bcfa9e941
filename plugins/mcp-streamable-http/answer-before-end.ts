import { MCP_UNANSWERED_REASON, SseDecoder, type SseFrame } from '../../core/plugins/sdk';

/**
 * JSON-RPC's "connection closed" code, which the gateway reads as a failed connection (the pooled
 * connection is replaced; nothing is retried, since the server may have run the tool).
 */
const CONNECTION_CLOSED = -32000;

/**
 * The event stream of one JSON-RPC request's POST, passed on unchanged, with one frame added if it ends
 * (or breaks) before the answer to `id` came: a JSON-RPC error for `id` whose `data.reason` is
 * MCP_UNANSWERED_REASON. Not when the request itself was given up (`signal`): nobody waits for it then.
 *
 * Why: the MCP SDK clients (1.x and 2.x) wait for the answer to a request until its timeout, however
 * the stream that should carry it ended. A server that closes the stream early, or answers with another
 * id, made the caller wait the whole call timeout (a minute by default) for an answer that could no
 * longer come.
 *
 * Not either when the stream numbered its events (an `id:` field): the server can resume it, and the SDK
 * reconnects with the last id to get the answer (an answer added here would end the call instead).
 * `resumable` is told that last id then, so the resuming request can be answered if it fails.
 */
export function answerBeforeEnd(body: ReadableStream<Uint8Array>, id: string | number, signal: AbortSignal, resumable?: (lastEventId: string) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new SseDecoder();
  let answered = false;
  const adds = () => !answered && !decoder.numbersEvents && !signal.aborted;
  const resumes = () => {
    if (!answered && !signal.aborted && decoder.lastEventId !== undefined) resumable?.(decoder.lastEventId);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (err) {
        // a break the SDK would not recover from becomes the answer's end; otherwise it sees the break
        if (!adds()) {
          resumes();
          return controller.error(err);
        }
        controller.enqueue(unansweredFrame(id));
        return controller.close();
      }
      if (read.done) {
        if (adds()) controller.enqueue(unansweredFrame(id));
        else resumes();
        return controller.close();
      }
      let frames: SseFrame[];
      try {
        frames = decoder.push(read.value);
      } catch (err) {
        // an event past the decoder's limit (64 MiB): the SDK would hold it whole waiting for its end, and
        // the request its timeout; the upstream's connection is closed, not left blocked on a full socket
        void reader.cancel(err).catch(() => undefined);
        if (answered) return controller.close();
        if (!adds()) {
          resumes();
          return controller.error(err);
        }
        controller.enqueue(unansweredFrame(id));
        return controller.close();
      }
      // once answered, nothing is added whatever follows (the decoder still bounds its events)
      if (!answered) answered = frames.some((frame) => answers(frame, id));
      controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * An event stream that answers no request (the server's own stream, a GET), failed at an event past the
 * decoder's limit (64 MiB) and its connection closed: the SDK reads such a stream without a limit, so a
 * server that never ended an event had the gateway hold everything it sent until memory ran out.
 */
export function boundedEvents(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new SseDecoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const read = await reader.read();
      if (read.done) return controller.close();
      try {
        decoder.push(read.value);
      } catch (err) {
        void reader.cancel(err).catch(() => undefined);
        return controller.error(err);
      }
      controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * A JSON answer (not an event stream) to request `id`: unchanged when it carries the answer, else with the
 * same closing error added (as a batch), for the same reason. The SDK reads a JSON answer whole and takes
 * each message in it; one with another id only made it report an unknown id while the caller waited.
 * `init` is what the new Response keeps of the old (its body is read here).
 */
export async function answerInJson(response: Response, id: string | number, init: ResponseInit): Promise<Response> {
  const text = await response.text();
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    // not JSON: the SDK fails the request at once on it
    return new Response(text, init);
  }
  const messages = Array.isArray(message) ? message : [message];
  if (messages.some((m) => isAnswerTo(m, id))) return new Response(text, init);
  return new Response(JSON.stringify([...messages, unansweredMessage(id)]), init);
}

/** Whether a frame is the answer to `id` (alone, or in a batch). */
function answers(frame: SseFrame, id: string | number): boolean {
  if (!frame.hasKey('result') && !frame.hasKey('error')) return false;
  let message: unknown;
  try {
    message = frame.json;
  } catch {
    return false;
  }
  return (Array.isArray(message) ? message : [message]).some((m) => isAnswerTo(m, id));
}

function isAnswerTo(message: unknown, id: string | number): boolean {
  if (message === null || typeof message !== 'object') return false;
  const m = message as { id?: unknown; result?: unknown; error?: unknown };
  return m.id === id && (m.result !== undefined || m.error !== undefined);
}

function unansweredMessage(id: string | number): object {
  return { jsonrpc: '2.0', id, error: { code: CONNECTION_CLOSED, message: 'The MCP server ended its answer without a result.', data: { reason: MCP_UNANSWERED_REASON } } };
}

/**
 * In place of the answer to a resuming request (GET with Last-Event-ID) that failed: the closing error for
 * `id`, the request the stream was resumed for. The SDK 1.x tries again a few times, then gives up without
 * failing the request, which then waited out its whole timeout (ten minutes by default) for a server that
 * had gone. The stream stays open until the connection is closed (`signal`): ended, it would have the SDK
 * open a new stream in its place.
 */
export function unansweredResumption(id: string | number, signal: AbortSignal | undefined): Response {
  let stop: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(unansweredFrame(id));
      stop = () => controller.close();
      if (!signal || signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    },
    cancel() {
      if (stop) signal?.removeEventListener('abort', stop);
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

function unansweredFrame(id: string | number): Uint8Array {
  // the blank line first ends an event the stream broke off in, which would otherwise swallow this one
  return new TextEncoder().encode(`\n\nevent: message\ndata: ${JSON.stringify(unansweredMessage(id))}\n\n`);
}
