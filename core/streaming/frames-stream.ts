import type { SseFrame } from './sse-frame';

/** Frames already in hand as the stream a streamed answer is (an answer the upstream sent whole, streamed). */
export async function* streamOfFrames(frames: SseFrame[]): AsyncGenerator<SseFrame> {
  yield* frames;
}
