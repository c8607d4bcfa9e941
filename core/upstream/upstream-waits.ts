/**
 * The moments the gateway has just sent a request upstream and is about to wait for the answer.
 *
 * Work that does not have to happen at once (the request log's commit, log-writer.ts) runs best then. A
 * client with one request at a time sends its next request as soon as it has the answer to the last. Work
 * done right after that answer (on the next turn) delays the next request, and it shows as latency: about
 * 0.1 ms at c=1 for a SQLite commit (issue 16). The same work done just after the next request has gone
 * upstream costs nobody any time: the process would be idle, waiting for the upstream.
 *
 * The upstream client calls `began` after each dispatch; `whenNext` callbacks run on the turn after it.
 */
export class UpstreamWaits {
  private waiting: (() => void)[] = [];

  /** run `work` once, on the turn after the next request goes upstream */
  whenNext(work: () => void): void {
    this.waiting.push(work);
  }

  /** a request has just been sent upstream */
  began(): void {
    if (this.waiting.length === 0) return;
    const due = this.waiting;
    this.waiting = [];
    // the next turn, not now: the dispatch's own writes and the caller's remaining work come first
    setImmediate(runAll, due);
  }
}

function runAll(due: (() => void)[]): void {
  for (const work of due) work();
}
