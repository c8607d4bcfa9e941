import type { Logger } from '../plugins/contracts';
import { lateOutcome, type LateOutcome } from './faults/store-guard';
import type { LogEntry } from './log-entry';
import type { StoreBackend } from './store-backend';

export interface LogWriterOptions {
  /** most entries kept waiting for a store that fails (default 50,000); beyond it new entries are dropped */
  maxQueued?: number;
  /** first retry delay; doubles per failure up to `maxRetryDelayMs` (defaults 100 ms, 5 s) */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** entries per retried write (default 500) */
  batchSize?: number;
}

interface Turn {
  written: Promise<void>;
  done: () => void;
}

interface Batch {
  entries: LogEntry[];
  /** the last attempt timed out: it may still be written; wait for it to end before writing it again */
  late?: LateOutcome;
  /** failed retries of this batch (timeouts aside) */
  refusals?: number;
}

/**
 * Refused retries of the queue's head before the writer looks for the entry the store refuses: the head
 * is split in halves (each half then splits at its first refusal), and an entry refused alone is tried
 * against the entries after it. A few, so a store that is briefly down (a restart, a failover) is simply
 * waited for.
 */
const REFUSALS_BEFORE_ISOLATING = 3;

/** writes one retry may spend looking for an entry the store takes (a 500-entry batch halves to one in 9) */
const PROBES = 16;

/** A batch refused again and again, in two: each half splits again at its first failure. */
function halves(batch: Batch): [Batch, Batch] {
  const half = Math.ceil(batch.entries.length / 2);
  const refusals = REFUSALS_BEFORE_ISOLATING - 1;
  return [
    { entries: batch.entries.slice(0, half), refusals },
    { entries: batch.entries.slice(half), refusals },
  ];
}

/**
 * The writer in front of the store for request-log rows (issue 13 point 6, issue 16).
 *
 * Batching: the entries settled in one turn of the event loop go to the store in one `appendLogs` call
 * (one transaction, or one journal write: sqlite-backend.ts) on the next turn, so the store sees one
 * write per turn at most, not one per request. A completed request's row thus reaches the store one turn
 * after the request settled: a SIGKILL loses only the rows of that last turn. Reads through the log
 * (`settled`) write at once.
 *
 * (Until the SQLite store journalled its rows, a turn's write was a commit, and it waited for the moment
 * the gateway had just sent its next request upstream, or 1 ms: a commit right after a response delayed
 * the next request of a client sending one at a time. With the journal a turn's write is one `write()`,
 * and the wait cost more than it saved: the timer and the extra turn of each write were about 5% of a
 * request's CPU at c=16, and at c=1 the median latency did not rise without them (0.37 -> 0.31 ms in one
 * paired run, 0.35 -> 0.34 ms in another).)
 *
 * Faults: a batch the store refuses is kept, in order, in a bounded queue that is retried with a doubling
 * delay until the store answers again, and flushed at drain. A batch refused again and again while the
 * store takes other writes is narrowed down to the entry it refuses, which is dropped (isolateRefused).
 * While anything is queued, new entries join the end of the queue, so rows reach the store in the order
 * requests settled. A write that timed out was sent and may still land (a frozen server answers when it
 * thaws): the writer waits for that write to end and only writes the batch again if it failed, so a slow
 * store never doubles a row or its spend.
 *
 * `record` never rejects: a request's answer never depends on its log row.
 */
export class LogWriter {
  /** entries waiting for a store that failed (a gauge) */
  get queued(): number {
    return this.queuedCount;
  }
  /**
   * entries given up (a counter): the queue was full, or the store refused the entry alone while it took
   * the entries after it, or the entry was still queued at shutdown
   */
  dropped = 0;
  /** writes the store refused or did not answer in time (a counter) */
  failedWrites = 0;
  /** entries written (a counter) */
  written = 0;

  private readonly maxQueued: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly batchSize: number;
  private pending: LogEntry[] = [];
  /** the next write, once an entry waits for it: its promise and how to resolve it */
  private turn: Turn | undefined;
  private readonly queue: Batch[] = [];
  private queuedCount = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private retrying: Promise<void> | undefined;
  private failuresInARow = 0;
  private closed = false;
  private turnsInFlight = 0;

  constructor(private readonly store: StoreBackend, private readonly logger: Logger, options: LogWriterOptions = {}) {
    this.maxQueued = options.maxQueued ?? 50_000;
    this.retryDelayMs = options.retryDelayMs ?? 100;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    this.batchSize = options.batchSize ?? 500;
  }

  /**
   * Resolves once the entry is written, or kept in the queue for a later write, or dropped (counted).
   * Every entry of a write shares its one promise.
   */
  write(entry: LogEntry): Promise<void> {
    this.pending.push(entry);
    if (!this.turn) this.turn = this.scheduleTurn();
    return this.turn.written;
  }

  private scheduleTurn(): Turn {
    let done!: () => void;
    const written = new Promise<void>((resolve) => (done = resolve));
    setImmediate(this.writeTurn);
    return { written, done };
  }

  /** Write what waits (nothing if that turn was already written, by a read). */
  private readonly writeTurn = async (): Promise<void> => {
    const turn = this.turn;
    if (!turn) return;
    const { done } = turn;
    this.turn = undefined;
    const entries = this.pending;
    this.pending = [];
    this.turnsInFlight += 1;
    try {
      // something older still waits: keep the order, the retry loop writes these after it
      if (this.queue.length || this.closed) this.enqueue(entries);
      else await this.attempt({ entries }, true);
    } finally {
      this.turnsInFlight -= 1;
      done();
    }
  };

  /**
   * Resolves once every entry handed in so far has been written or queued for retry, so this instance's
   * log and spend views include the requests it has already settled (read-your-writes).
   */
  async settled(): Promise<void> {
    while (this.turn || this.turnsInFlight > 0) {
      void this.writeTurn(); // what waits for the next turn is written now
      await new Promise((r) => setImmediate(r));
    }
  }

  /** One write; on failure the batch goes to the queue (at its end when new, back at its head when retried). */
  private async attempt(batch: Batch, isNew: boolean): Promise<boolean> {
    const late = batch.late?.state();
    if (late === 'pending') {
      // the earlier write has not ended (the store is still frozen): wait, do not write it a second time
      this.scheduleRetry();
      return false;
    }
    batch.late = undefined;
    try {
      if (late !== 'done') await this.store.appendLogs(batch.entries);
      this.written += batch.entries.length;
      this.failuresInARow = 0;
      return true;
    } catch (err) {
      this.failedWrites += 1;
      this.failuresInARow += 1;
      if (isNew) this.enqueue(batch.entries, lateOutcome(err));
      else batch.late = lateOutcome(err);
      if (this.failuresInARow === 1) this.logger.warn('request log write failed; entries kept for retry', { error: (err as Error).message, queued: this.queuedCount });
      this.scheduleRetry();
      return false;
    }
  }

  /**
   * The head failed again. A store that answers a batch with an error every time, while it takes other
   * writes, is refusing something in it: a row it cannot hold (a value past a column's limit, say, in a
   * field a client chose). Retried for ever, that batch held back every entry behind it, of every
   * organisation, so no request was logged or counted in the spend views until a restart. So after a
   * few failures the head is split in halves (the halves at their first failure), and an entry that fails
   * on its own has the store tried with the entries after it: once the store takes one of those, it is
   * answering and refuses this entry alone, which is dropped (counted, with an error line naming the
   * request). If it takes none, it is down, not refusing a row: everything waits for the next retry as
   * before. A write that timed out is never split or passed over: it may still land.
   *
   * Returns true when the head is done with (written after all, or dropped: the caller takes it off the
   * queue), false to wait for the next retry. Only a split moves the head (its halves take its place), and
   * then this returns false.
   */
  private async isolateRefused(head: Batch): Promise<boolean> {
    if (head.late) return false;
    head.refusals = (head.refusals ?? 0) + 1;
    if (head.refusals < REFUSALS_BEFORE_ISOLATING) return false;
    if (head.entries.length > 1) {
      this.queue.splice(0, 1, ...halves(head));
      return false;
    }
    if (!(await this.writeOneAfterHead())) return false;
    // once more, now that the store took a write: a store that came back between the two takes it
    if (await this.attempt(head, false)) return true;
    if (head.late) return false;
    const [refused] = head.entries;
    this.dropped += 1;
    this.logger.error('request log entry refused by the store while it takes others; dropped', { requestId: refused.id, org: refused.org, keyId: refused.keyId });
    return true;
  }

  /**
   * Write the first batch after the head that the store takes, halving those it refuses (several clients
   * may send rows it refuses) and passing over single entries it refuses; at most PROBES writes. The only
   * time the writer writes entries out of order: the batch written goes before those it passed over.
   */
  private async writeOneAfterHead(): Promise<boolean> {
    for (let i = 1, probes = 0; i < this.queue.length && probes < PROBES; probes++) {
      const batch = this.queue[i];
      if (await this.attempt(batch, false)) {
        this.queue.splice(i, 1);
        this.queuedCount -= batch.entries.length;
        return true;
      }
      if (batch.late) return false; // not answering in time: down, or frozen
      if (batch.entries.length > 1) this.queue.splice(i, 1, ...halves(batch));
      else i++;
    }
    return false;
  }

  private enqueue(entries: LogEntry[], late?: LateOutcome): void {
    const room = this.maxQueued - this.queuedCount;
    const kept = entries.slice(0, Math.max(0, room));
    const lost = entries.length - kept.length;
    if (lost > 0) {
      if (this.dropped === 0 || Math.floor((this.dropped + lost) / 1000) > Math.floor(this.dropped / 1000)) {
        this.logger.error('request log queue full; entries dropped', { dropped: this.dropped + lost, maxQueued: this.maxQueued });
      }
      this.dropped += lost;
    }
    if (late) this.queue.push({ entries: kept, late }); // whole: it is one write that may still land
    else for (let i = 0; i < kept.length; i += this.batchSize) this.queue.push({ entries: kept.slice(i, i + this.batchSize) });
    this.queuedCount += kept.length;
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.retrying || !this.queue.length) return;
    const delay = Math.min(this.retryDelayMs * 2 ** Math.max(0, this.failuresInARow - 1), this.maxRetryDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.drainQueue();
    }, delay);
    this.retryTimer.unref();
  }

  /** Write the queue from its head, in order, until it is empty or a write fails. */
  private drainQueue(): Promise<void> {
    if (this.retrying) return this.retrying;
    this.retrying = (async () => {
      try {
        while (this.queue.length) {
          const head = this.queue[0];
          if (!(await this.attempt(head, false)) && !(await this.isolateRefused(head))) return;
          // written, or given up: still first (isolateRefused splits the head only when it answers false)
          this.queue.shift();
          this.queuedCount -= head.entries.length;
          if (this.queue.length === 0 && this.failedWrites > 0) this.logger.info('request log caught up after store errors', { written: this.written });
        }
      } finally {
        this.retrying = undefined;
        if (this.queue.length && !this.retryTimer) this.scheduleRetry();
      }
    })();
    return this.retrying;
  }

  /**
   * At drain: write what waits, retrying until `timeoutMs` has passed. What is still queued then is
   * counted as dropped and logged (the process is going away).
   */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.settled();
    while (this.queue.length && Date.now() < deadline) {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
      }
      await this.drainQueue();
      if (this.queue.length) await new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now()))));
    }
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.queuedCount) {
      this.logger.error('request log entries not written before shutdown', { dropped: this.queuedCount });
      this.dropped += this.queuedCount;
      this.queue.length = 0;
      this.queuedCount = 0;
    }
  }
}
