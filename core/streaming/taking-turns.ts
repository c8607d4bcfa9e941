import type { SseFrame } from './sse-frame';

/** frames a stream made in process hands on before its reader waits a turn of the event loop */
const FRAMES_PER_TURN = 64;

/**
 * A stream made in process (a local operation: the echo demo model, or a provider plugin's) never waits
 * for I/O, so reading it runs on microtasks alone: no other request, timer or health check gets a turn
 * until it ends, however long that takes (a 9.5 MB message echoed word by word held the whole process for
 * about 4 s, and 13 s behind guardrails). Paced here, once for every local stream: after every
 * FRAMES_PER_TURN frames the reader waits one turn (setImmediate), as it waits for an upstream's next read.
 */
export async function* takingTurns(stream: AsyncIterable<SseFrame>): AsyncGenerator<SseFrame> {
  let handed = 0;
  for await (const frame of stream) {
    yield frame;
    if (++handed % FRAMES_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
