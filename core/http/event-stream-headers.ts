/**
 * The headers of every event stream the gateway answers with: never cached, and not held back by a
 * buffering proxy (nginx reads `x-accel-buffering`), so each event reaches the client as it is written.
 */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};
