/**
 * A stream blocked mid-way by a post guardrail ends before the upstream reports its usage (OpenAI sends it
 * in the last chunk, Anthropic its output count at the end), yet the upstream did the work and the call
 * must still be charged. So the text the upstream streamed is counted as it passes, and on a block the
 * usage the upstream had not reported is estimated (core/spend/usage-estimate.ts) and flagged in the
 * log as `usageEstimated`. The stream is not drained to wait for the real figures: that would make the
 * upstream generate (and bill) the rest of an answer nobody will see.
 */
import { GuardrailBlockedError } from '../errors/gateway-error';
import type { GatewayContext } from '../pipeline/context';
import type { SseFrame } from '../streaming/sse-frame';
import { fillUnreportedUsage, StreamedText } from '../spend/usage-estimate';

/** Passes the upstream's frames on unchanged, keeping their text to count. */
export async function* countStreamText(frames: AsyncIterable<SseFrame>, text: StreamedText): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    text.add(frame);
    yield frame;
  }
}

/** Passes the guarded stream on; when a guardrail blocks it, fills in the usage the upstream never reported. */
export async function* chargeBlockedStream(ctx: GatewayContext, frames: AsyncIterable<SseFrame>, text: StreamedText): AsyncGenerator<SseFrame> {
  try {
    yield* frames;
  } catch (err) {
    if (err instanceof GuardrailBlockedError && fillUnreportedUsage(ctx.usage, ctx.model?.body, text.chars())) ctx.logDetails.usageEstimated = true;
    throw err;
  }
}
