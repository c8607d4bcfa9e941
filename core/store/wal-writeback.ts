import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Writes a SQLite WAL's new pages to disk in the background, off the event loop, so that the checkpoint
 * SQLite runs inside a commit finds little left to sync.
 *
 * Why: with `synchronous = NORMAL` a commit only appends to the WAL (no fsync), and the kernel keeps those
 * pages dirty for up to 30 s. The checkpoint then starts with an fsync of the whole WAL written since the
 * last one (up to 32 MiB), on the event loop: a checkpoint of 6,900 frames took 30 to 40 ms on this kind of
 * machine, and 12 to 16 ms with these syncs (the rest is copying pages into the file and syncing it).
 * An `fdatasync` from libuv's thread pool after commits, at most one in flight and one every `everyMs`,
 * leaves only the last few milliseconds' pages for SQLite's own sync. SQLite's syncs stay exactly as they
 * are, so nothing about durability changes: this only moves work earlier and off the loop.
 *
 * Used on Linux only (walWritebackFor). The file is opened read-only on the first commit after it exists, and
 * closed only after the database (closing a file's descriptor drops the process's POSIX locks on it;
 * SQLite keeps its WAL locks in the -shm file, and this descriptor outlives every use of the WAL anyway).
 */
export class WalWriteback {
  private fd: number | undefined;
  private running = false;
  private closed = false;
  private lastStart = -Infinity;
  private started = 0;

  constructor(
    private readonly walPath: string,
    private readonly everyMs = WRITEBACK_EVERY_MS,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** After a commit: start a background sync of the WAL unless one is running or one started lately. */
  nudge(): void {
    if (this.running || this.closed) return;
    const t = this.now();
    if (t - this.lastStart < this.everyMs) return;
    this.lastStart = t;
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.walPath, 'r');
      } catch {
        return; // no WAL yet (nothing committed), or no descriptor to spare: a commit an interval on tries again
      }
    }
    this.running = true;
    this.started++;
    // An error here is not the commit's: the write is already in the WAL, and SQLite's own sync at the
    // checkpoint is the one durability rests on (and reports its errors itself).
    fdatasync(this.fd, () => {
      this.running = false;
      if (this.closed) this.release();
    });
  }

  /** After the database is closed; a sync still running closes the descriptor when it ends. */
  close(): void {
    this.closed = true;
    if (!this.running) this.release();
  }

  /** background syncs started so far */
  get syncsStarted(): number {
    return this.started;
  }

  /** whether one is running now */
  get syncing(): boolean {
    return this.running;
  }

  private release(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * The writeback for a database file, or none: none for `:memory:` (no WAL), and none off Linux: on macOS
 * libuv makes every fdatasync a flush of the drive's own cache (F_FULLFSYNC), far more than SQLite itself
 * asks for there, and not what was measured.
 */
export function walWritebackFor(databaseFile: string): WalWriteback | undefined {
  return databaseFile !== ':memory:' && process.platform === 'linux' ? new WalWriteback(`${databaseFile}-wal`) : undefined;
}

/** at most one background sync this often: a few milliseconds of WAL at most is left for the checkpoint */
const WRITEBACK_EVERY_MS = 20;
