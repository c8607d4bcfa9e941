import { UpstreamError } from '../errors/gateway-error';
import { scrubMessage } from '../errors/scrub';
import type { SseFrame } from '../streaming/sse-frame';

/** An `event: error` frame (Anthropic style, OpenAI's image streams) or a data object carrying `error` (OpenAI style). */
export function isErrorFrame(frame: SseFrame): boolean {
  if (frame.event === 'error') return true;
  // this frame's bytes only, not the rest of the read it came in (asked of every frame)
  if (frame.isDone || !frame.mentionsInFrame('"error"')) return false;
  try {
    const json = frame.json;
    return typeof json === 'object' && json !== null && (json.type === 'error' || (typeof json.error === 'object' && json.error !== null));
  } catch {
    return false;
  }
}

/** The gateway's error for an upstream's error event, with the upstream's message (scrubbed). */
export function upstreamStreamError(frame: SseFrame, midStream: boolean): UpstreamError {
  const when = midStream ? 'in the middle of the stream' : 'before sending any output';
  return new UpstreamError(`The upstream reported an error ${when}${errorMessageOf(frame)}.`, 'upstream_stream_error');
}

function errorMessageOf(frame: SseFrame): string {
  try {
    const message = frame.json?.error?.message;
    return typeof message === 'string' && message ? `: ${scrubMessage(message).slice(0, 300)}` : '';
  } catch {
    return '';
  }
}
