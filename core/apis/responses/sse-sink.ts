/**
 * Writes Responses stream events as SSE (`event: <type>` + `data: <json>`). Events produced before the
 * first model round is accepted are held, so a request the pipeline refuses at once (unknown model, budget)
 * still gets a plain HTTP error instead of a stream that fails.
 */
import { once } from 'node:events';
import type { Response } from 'express';
import { COST_HEADER } from '../../stages/spend';
import { EVENT_STREAM_HEADERS } from '../../http/event-stream-headers';
import type { ResponseEvent } from './response-recorder';

export class SseSink {
  private held: string[] | null = [];

  constructor(private readonly res: Response, private readonly signal: AbortSignal) {}

  get opened(): boolean {
    return this.held === null;
  }

  readonly listener = (event: ResponseEvent): void => {
    const wire = `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
    if (this.held) this.held.push(wire);
    else this.res.write(wire);
  };

  open(headers: Record<string, string>): void {
    if (!this.held) return;
    this.res.writeHead(200, { ...headers, ...EVENT_STREAM_HEADERS, trailer: COST_HEADER });
    for (const wire of this.held) this.res.write(wire);
    this.held = null;
  }

  async drain(): Promise<void> {
    if (this.held === null && this.res.writableNeedDrain && !this.signal.aborted) await once(this.res, 'drain', { signal: this.signal }).catch(() => undefined);
  }

  end(cost: string): void {
    this.res.addTrailers({ [COST_HEADER]: cost });
    this.res.end();
  }
}
