import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { settleWithin } from '../time/settle-within';

/**
 * `/metrics` under `--workers N`. Each worker counts in its own registry, and node:cluster hands each
 * scrape to one worker: a scrape answered from that worker's counts alone made every counter go down and
 * up between scrapes (Prometheus reads that as restarts, and rate() as nonsense) and showed a part of the
 * traffic. So the worker a scrape reaches asks the primary, which gathers every worker's metrics over IPC
 * and sums them (prom-client's AggregatorRegistry; each metric's `aggregator` says how: counters and
 * histograms add up).
 */
const ASK = 'model-gateway:metrics-ask';
const COLLECT = 'model-gateway:metrics-collect';
const PART = 'model-gateway:metrics-part';
const ANSWER = 'model-gateway:metrics-answer';

/** how long the primary waits for the workers' parts (one that does not answer is left out) */
const GATHER_MS = 2_000;
/** how long a worker waits for the primary's answer before it answers with its own counts */
const ASK_MS = 5_000;

type Message = Record<string, unknown>;
const field = (message: unknown, name: string): unknown => (typeof message === 'object' && message !== null ? (message as Message)[name] : undefined);

/** A worker's side: answer the primary's collects, and ask it for the whole when a scrape arrives. */
export class WorkerMetrics {
  private next = 0;
  private readonly waiting = new Map<number, (text: string) => void>();
  private readonly onMessage = (message: unknown) => {
    const collect = field(message, COLLECT);
    if (typeof collect === 'number') {
      void this.registry.getMetricsAsJSON().then(
        (metrics) => this.channel.connected && this.channel.send?.({ [PART]: collect, metrics }),
        () => this.channel.connected && this.channel.send?.({ [PART]: collect, metrics: [] }),
      );
      return;
    }
    const answer = field(message, ANSWER);
    const text = field(message, 'text');
    if (typeof answer === 'number' && typeof text === 'string') this.waiting.get(answer)?.(text);
  };

  constructor(
    private readonly registry: Registry,
    private readonly channel: NodeJS.Process = process,
  ) {
    channel.on('message', this.onMessage);
  }

  /** Every worker's metrics as one text; this worker's own when the primary does not answer. */
  async metrics(): Promise<string> {
    if (!this.channel.connected || !this.channel.send) return this.registry.metrics();
    const id = this.next++;
    const answered = new Promise<string>((resolve) => {
      this.waiting.set(id, resolve);
      this.channel.send!({ [ASK]: id });
    });
    const text = await settleWithin(answered, ASK_MS, () => undefined);
    this.waiting.delete(id);
    return text ?? this.registry.metrics();
  }

  close(): void {
    this.channel.off('message', this.onMessage);
  }
}

/** The primary's side: a worker asks; every worker's part is gathered, summed and sent back to it. */
export class PrimaryMetrics {
  private next = 0;
  private readonly gathering = new Map<number, { parts: unknown[][]; pending: number; done: () => void }>();

  /** Handles the message if it is one of these; false otherwise. */
  onMessage(from: Worker, message: unknown, workers: () => Worker[]): boolean {
    const ask = field(message, ASK);
    if (typeof ask === 'number') {
      void this.gather(workers()).then((text) => from.isConnected() && from.send({ [ANSWER]: ask, text }));
      return true;
    }
    const part = field(message, PART);
    if (typeof part === 'number') {
      const gathering = this.gathering.get(part);
      const metrics = field(message, 'metrics');
      if (gathering && Array.isArray(metrics)) {
        gathering.parts.push(metrics);
        if (--gathering.pending === 0) gathering.done();
      }
      return true;
    }
    return false;
  }

  private async gather(workers: Worker[]): Promise<string> {
    const id = this.next++;
    const parts: unknown[][] = [];
    const connected = workers.filter((w) => w.isConnected());
    // a worker that does not answer in time is left out of this scrape
    const answered = new Promise<void>((resolve) => {
      this.gathering.set(id, { parts, pending: connected.length, done: resolve });
      if (connected.length === 0) resolve();
      for (const worker of connected) worker.send({ [COLLECT]: id });
    });
    await settleWithin(answered, GATHER_MS, () => undefined);
    this.gathering.delete(id);
    return AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
  }
}
