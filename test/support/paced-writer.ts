import type { ServerResponse } from 'node:http';

/**
 * A fake upstream's answer written as fast as its socket takes it, and how far it has got: what the
 * backpressure tests watch to see that a reader that stops holds the upstream back.
 */
export class PacedWriter {
  /** bytes handed to the socket so far */
  written = 0;
  /** the last byte was written */
  finished = false;
  /** waiting for the socket to drain */
  blocked = false;

  /**
   * Write the pieces `next` gives (undefined: none left) while the socket takes them, waiting for 'drain'
   * when it does not, then end the answer with `last`.
   */
  pump(res: ServerResponse, next: () => string | Buffer | undefined, last?: string): void {
    const go = () => {
      this.blocked = false;
      while (!res.destroyed) {
        const piece = next();
        if (piece === undefined) break;
        this.written += piece.length;
        if (!res.write(piece)) {
          this.blocked = true;
          res.once('drain', go);
          return;
        }
      }
      if (!res.destroyed) res.end(last ?? '', () => (this.finished = true));
    };
    go();
  }

  reset(): void {
    this.written = 0;
    this.finished = false;
    this.blocked = false;
  }
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wait until the writer has stopped: blocked on its socket, with nothing more written over a few looks in
 * a row (or finished, which the caller's assertions then report).
 */
export async function untilHeldBack(writer: PacedWriter): Promise<void> {
  let last = -1;
  let still = 0;
  while (still < 4 && !writer.finished) {
    await wait(50);
    still = writer.blocked && writer.written === last ? still + 1 : 0;
    last = writer.written;
  }
}
