import type { SseFrame } from './sse-frame';

/**
 * A stream of frames that arrive a batch at a time: the frames one upstream read completed. Layers that
 * can take a whole batch (the meter, the endpoint's writer) do, so a 20-chunk answer costs a promise hop
 * per upstream read rather than one per frame per layer. Anyone else (guardrails, format translators,
 * plugins) iterates it frame by frame like any `AsyncIterable<SseFrame>`. Single consumer, like the
 * generators it replaces: take either the batches or the frames, once.
 */
export class FrameBatches implements AsyncIterable<SseFrame> {
  constructor(private readonly source: AsyncIterator<SseFrame[]>) {}

  batches(): AsyncIterator<SseFrame[]> {
    return this.source;
  }

  [Symbol.asyncIterator](): AsyncIterator<SseFrame> {
    const source = this.source;
    let batch: SseFrame[] = [];
    let i = 0;
    return {
      async next(): Promise<IteratorResult<SseFrame>> {
        while (i >= batch.length) {
          const r = await source.next();
          if (r.done) return { done: true, value: undefined };
          batch = r.value;
          i = 0;
        }
        return { done: false, value: batch[i++] };
      },
      async return(): Promise<IteratorResult<SseFrame>> {
        batch = [];
        await source.return?.();
        return { done: true, value: undefined };
      },
    };
  }
}

/**
 * The batches of a stream: its own when it has them, otherwise each frame as a batch of one (a stream
 * from a guardrail, a translator or a local model), so batch consumers have one code path.
 */
export function batchesOf(stream: AsyncIterable<SseFrame>): AsyncIterable<SseFrame[]> {
  return new Iterated(stream instanceof FrameBatches ? stream.batches() : singleFrames(stream));
}

/**
 * An iterator as an iterable. A class rather than `{ [Symbol.asyncIterator]: () => iterator }`: V8 builds
 * an object literal with a symbol key through its slow path, about 15 times the cost of this (issue 16:
 * about 3 µs a stream in the profile, for one object).
 */
class Iterated<T> implements AsyncIterable<T> {
  constructor(private readonly iterator: AsyncIterator<T>) {}

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.iterator;
  }
}

function singleFrames(stream: AsyncIterable<SseFrame>): AsyncIterator<SseFrame[]> {
  const frames = stream[Symbol.asyncIterator]();
  return {
    async next(): Promise<IteratorResult<SseFrame[]>> {
      const r = await frames.next();
      return r.done ? { done: true, value: undefined } : { done: false, value: [r.value] };
    },
    async return(): Promise<IteratorResult<SseFrame[]>> {
      await frames.return?.();
      return { done: true, value: undefined };
    },
  };
}
