/**
 * Files only the gateway's own user may read: the SQLite database (and its WAL and shared-memory files)
 * and the secret key file. Modes are set when a file is created, and tightened on files an older version
 * left readable, before anything is written to them.
 */
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIR_MODE = 0o700;

/** Create the directory of `file` if missing (owner-only when created here; an existing one is left as is). */
export function ensureParentDir(file: string): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Create `file` empty with mode 0600 if it does not exist, else make it 0600; never changes its content. */
export function makePrivate(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  chmodSync(file, PRIVATE_FILE_MODE);
}

/** `makePrivate` for each file that exists. */
export function tightenIfPresent(files: string[]): void {
  for (const file of files) if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
}

/**
 * Replace `file` with `content` in one step (a crash leaves the old or the new file, never half of one);
 * the new file is 0600 from its creation.
 */
export function writePrivateFileAtomic(file: string, content: string): void {
  ensureParentDir(file);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, PRIVATE_FILE_MODE);
  renameSync(tmp, file);
}
