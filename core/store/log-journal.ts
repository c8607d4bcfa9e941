import { chmodSync, closeSync, ftruncateSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { LogEntry } from './log-entry';
import { PRIVATE_FILE_MODE } from './private-file';

/**
 * The request-log rows a SQLite store has taken and not yet committed, one JSON line each, in a file of
 * the process's own beside the database (issue 16). A line is handed to the OS in the turn its row is
 * taken, so a process killed with SIGKILL loses none of them: the next process to open the database
 * commits what a dead process's journal holds beyond what it had committed (sqlite-backend.ts).
 *
 * Why: a SQLite commit rewrites whole pages (the log's last leaf, its index, the spend rollup row) and
 * costs a dozen system calls however few rows it carries; under load one commit per event-loop turn was
 * about a sixth of the gateway's CPU. One write() a turn here, and a commit every COMMIT_EVERY_MS.
 *
 * The file is `<database>-rows-<host>-<pid>-<n>` (n: the store opened n-th in that process): one writer
 * per file, whatever number of processes or stores share the database (`--workers N`), and a name that
 * says whether its writer is still alive (same host, pid gone). A process reusing a dead one's pid (a
 * restarted container is pid 1 again) replays that one's files before it writes its own.
 */
export class LogJournal {
  private fd: number | undefined;
  /** bytes in the file: everything appended since it was created or last emptied */
  size = 0;

  constructor(readonly file: string) {}

  /** A new journal of this process for `dbFile`, under a name no other open store uses. */
  static forProcess(dbFile: string): LogJournal {
    const journal = new LogJournal(`${journalPrefix(dbFile)}${process.pid}-${++opened}`);
    openHere.add(journal.file);
    return journal;
  }

  /** The name its committed offset is kept under: the file's base name. */
  get name(): string {
    return path.basename(this.file);
  }

  /**
   * Append the lines (each ending in a newline). On a failed write (a full disk) the file is cut back to
   * where it was, so no half line is left for later lines to join, and the error is thrown.
   */
  append(text: string): void {
    const fd = this.open();
    const bytes = Buffer.from(text);
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, this.size + written);
    } catch (err) {
      if (written > 0) ftruncateSync(fd, this.size);
      throw err;
    }
    this.size += written;
  }

  /** Empty the file (everything in it is committed). */
  empty(): void {
    if (this.fd === undefined) return;
    ftruncateSync(this.fd, 0);
    this.size = 0;
  }

  /** Close the file, and remove it when `remove` (everything in it is committed). */
  close(remove: boolean): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    openHere.delete(this.file);
    if (remove) removeFile(this.file);
  }

  /** true once the file exists (the first append made it) */
  get created(): boolean {
    return this.fd !== undefined;
  }

  private open(): number {
    if (this.fd === undefined) {
      // 'w': a file an earlier process left under this name was replayed when the store opened
      this.fd = openSync(this.file, 'w', PRIVATE_FILE_MODE);
      chmodSync(this.file, PRIVATE_FILE_MODE);
      this.size = 0;
    }
    return this.fd;
  }
}

/** This host's name as it appears in journal file names (anything but letters, digits, '.' and '_' becomes '_'). */
const HOST = hostname().replace(/[^A-Za-z0-9._]/g, '_') || 'host';
/** journals this process has open (several stores may share one database file: tests, the CLI's commands) */
const openHere = new Set<string>();
let opened = 0;

function journalPrefix(dbFile: string): string {
  return path.join(path.dirname(path.resolve(dbFile)), `${path.basename(dbFile)}-rows-${HOST}-`);
}

/** A journal of `dbFile` whose writer is gone: its file, and the name its committed offset is kept under. */
export interface LeftJournal {
  file: string;
  name: string;
}

/** The journals of `dbFile` left by this host's processes that are gone, or by this process's pid before it. */
export function leftJournals(dbFile: string): LeftJournal[] {
  const prefix = journalPrefix(dbFile);
  const dir = path.dirname(prefix);
  const start = path.basename(prefix);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const left: LeftJournal[] = [];
  for (const name of names) {
    if (!name.startsWith(start)) continue;
    const owner = /^([1-9]\d{0,9})-[1-9]\d{0,9}$/.exec(name.slice(start.length));
    if (!owner) continue;
    const file = path.join(dir, name);
    const pid = Number(owner[1]);
    if (pid === process.pid ? !openHere.has(file) : !isAlive(pid)) left.push({ file, name });
  }
  return left;
}

/** The rows of a journal from byte `offset` on, and the file's size; a line that does not parse is skipped. */
export function readJournal(file: string, offset: number): { rows: JournalRow[]; size: number } {
  const bytes = readFileSync(file);
  const rows: JournalRow[] = [];
  if (offset >= bytes.length) return { rows, size: bytes.length };
  for (const line of bytes.subarray(offset).toString('utf8').split('\n')) {
    if (!line) continue;
    try {
      const entry = JSON.parse(line) as LogEntry;
      if (entry && typeof entry === 'object' && typeof entry.id === 'string' && typeof entry.time === 'string') rows.push({ entry, json: line });
    } catch {
      // torn by a power loss: the rest of the file is still read
    }
  }
  return { rows, size: bytes.length };
}

/** A log row and its JSON text (the journal's line, and the `entry` column). */
export interface JournalRow {
  entry: LogEntry;
  json: string;
}

/** How far into a journal its rows are committed: recorded in the transaction of the rows before it. */
export interface JournalMark {
  name: string;
  offset: number;
}

export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
