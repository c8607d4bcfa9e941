/**
 * A stream blocked mid-way by a post guardrail ends before the upstream reports its usage (OpenAI sends it
 * in the last chunk, Anthropic its output count at the end), yet the upstream did the work and the call
 * must still be charged. So the text the upstream streamed is counted as it passes, and on a block the
 * usage the upstream had not reported is estimated (about four characters per token) and flagged in the
 * log as `usageEstimated`. The stream is not drained to wait for the real figures: that would make the
 * upstream generate (and bill) the rest of an answer nobody will see.
 */
import { GuardrailBlockedError } from '../errors/gateway-error';
import type { GatewayContext } from '../pipeline/context';
import type { ApiFormat } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';

const CHARS_PER_TOKEN = 4;

/** The generated text a frame carries: chat content, refusal and tool-call arguments, Messages deltas. */
function frameTextLength(format: ApiFormat, frame: SseFrame): number {
  if (frame.isDone) return 0;
  const json = frame.json;
  if (format === 'chat') {
    let n = 0;
    for (const choice of Array.isArray(json?.choices) ? json.choices : []) {
      const delta = choice?.delta;
      if (typeof delta?.content === 'string') n += delta.content.length;
      if (typeof delta?.refusal === 'string') n += delta.refusal.length;
      for (const call of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) if (typeof call?.function?.arguments === 'string') n += call.function.arguments.length;
    }
    return n;
  }
  const delta = json?.delta;
  return (typeof delta?.text === 'string' ? delta.text.length : 0) + (typeof delta?.partial_json === 'string' ? delta.partial_json.length : 0);
}

export interface TextCount {
  chars: number;
}

/** Passes the upstream's frames on unchanged, counting their text. */
export async function* countStreamText(format: ApiFormat, frames: AsyncIterable<SseFrame>, count: TextCount): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    count.chars += frameTextLength(format, frame);
    yield frame;
  }
}

/** Passes the guarded stream on; when a guardrail blocks it, fills in the usage the upstream never reported. */
export async function* chargeBlockedStream(ctx: GatewayContext, frames: AsyncIterable<SseFrame>, count: TextCount): AsyncGenerator<SseFrame> {
  try {
    yield* frames;
  } catch (err) {
    if (err instanceof GuardrailBlockedError) estimateUnreported(ctx, count.chars);
    throw err;
  }
}

function estimateUnreported(ctx: GatewayContext, outputChars: number): void {
  let estimated = false;
  if (ctx.usage.outputTokens === 0 && outputChars > 0) {
    ctx.usage.outputTokens = Math.ceil(outputChars / CHARS_PER_TOKEN);
    estimated = true;
  }
  if (ctx.usage.inputTokens === 0) {
    const body = ctx.model?.body;
    const requestChars = JSON.stringify(body?.messages ?? body ?? '').length + (typeof body?.system === 'string' ? body.system.length : 0);
    ctx.usage.inputTokens = Math.ceil(requestChars / CHARS_PER_TOKEN);
    estimated = true;
  }
  if (estimated) ctx.logDetails.usageEstimated = true;
}
