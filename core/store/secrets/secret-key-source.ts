/**
 * Where the key ring that seals stored secrets comes from, in this order:
 *
 * 1. `GATEWAY_SECRET_KEY`: 32 bytes as 64 hex digits or as base64 (`openssl rand -base64 32`). Several
 *    keys separated by commas form a ring: the first encrypts, all decrypt (for rotation).
 * 2. `GATEWAY_SECRET_KEY_FILE`, or else the default key file `secret.key` in the data directory: beside
 *    the SQLite file, or `./data/` for a Redis or PostgreSQL store. One base64 key per line, the current one first;
 *    `#` starts a comment. Created with mode 0600 and a random key on first start, which is logged once.
 * 3. A `memory://` store without either gets a random key that lives in the process (nothing outlives it).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../plugins/contracts';
import { ensureParentDir, PRIVATE_FILE_MODE } from '../private-file';
import { SECRET_KEY_BYTES, SecretBox, SecretKeyError } from './secret-box';

export const SECRET_KEY_ENV = 'GATEWAY_SECRET_KEY';
export const SECRET_KEY_FILE_ENV = 'GATEWAY_SECRET_KEY_FILE';
export const KEY_FILE_NAME = 'secret.key';

export type KeySource = { kind: 'env' } | { kind: 'file'; file: string } | { kind: 'ephemeral' };

/** Which source applies to this store and environment (nothing is read yet). */
export function keySourceFor(storeUrl: string, env: NodeJS.ProcessEnv): KeySource {
  if (env[SECRET_KEY_ENV]) return { kind: 'env' };
  if (env[SECRET_KEY_FILE_ENV]) return { kind: 'file', file: path.resolve(env[SECRET_KEY_FILE_ENV]!) };
  if (storeUrl.startsWith('sqlite://')) {
    const db = storeUrl.slice('sqlite://'.length);
    return db === ':memory:' ? { kind: 'ephemeral' } : { kind: 'file', file: path.join(path.dirname(path.resolve(db)), KEY_FILE_NAME) };
  }
  if (/^(rediss?|postgres(ql)?):\/\//.test(storeUrl)) return { kind: 'file', file: path.resolve('data', KEY_FILE_NAME) };
  return { kind: 'ephemeral' };
}

/** The key ring for this store: read from its source, or a key file created on first start. */
export function loadSecretBox(storeUrl: string, env: NodeJS.ProcessEnv, logger?: Logger): SecretBox {
  const source = keySourceFor(storeUrl, env);
  if (source.kind === 'env') return new SecretBox(parseKeyRing(env[SECRET_KEY_ENV]!, SECRET_KEY_ENV), SECRET_KEY_ENV);
  if (source.kind === 'ephemeral') return SecretBox.ephemeral();
  const { file } = source;
  if (!existsSync(file)) {
    if (createKeyFile(file)) {
      logger?.info('created a secret key file: it encrypts the credentials stored through the management API; back it up with the store, or set GATEWAY_SECRET_KEY instead', {
        file,
        mode: '0600',
        ...(/^(redis|postgres)/.test(storeUrl) ? { note: 'every gateway instance sharing this store needs the same key' } : {}),
      });
    }
  } else {
    const stats = statSync(file);
    // GATEWAY_SECRET_KEY_FILE=/run/secrets (the folder, not the file in it) failed with a bare EISDIR naming nothing
    if (stats.isDirectory()) throw new SecretKeyError(`the key file ${file} is a directory, not a file${env[SECRET_KEY_FILE_ENV] ? ` (from ${SECRET_KEY_FILE_ENV})` : ''}`);
    if ((stats.mode & 0o077) !== 0) logger?.warn('the secret key file can be read by other users; run chmod 600 on it', { file });
  }
  return new SecretBox(readKeyFile(file), file, () => readKeyFile(file));
}

/**
 * A new key file with one random key; false when another process created it first (then it is read).
 * The key is written to a private temporary file that is then linked into place: the key file appears
 * whole or not at all, so a process that starts at the same moment (the workers of `--workers N` on
 * their first start) never reads it empty.
 */
function createKeyFile(file: string): boolean {
  ensureParentDir(file);
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, formatKeyFile([randomBytes(SECRET_KEY_BYTES)]));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temporary);
  }
}

export function readKeyFile(file: string): Buffer[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    // node's own message names neither the key file's role nor, for some codes, the file
    throw new SecretKeyError(`cannot read the key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  return parseKeyRing(lines.join(','), `the key file ${file}`);
}

export function formatKeyFile(ring: readonly Buffer[]): string {
  const header = '# model-gateway secret keys (AES-256-GCM), base64, one per line; the first encrypts, all decrypt.\n# Keep this file private (mode 0600) and back it up with the store.\n';
  return header + ring.map((k) => `${k.toString('base64')}\n`).join('');
}

/** Comma-separated keys, each 64 hex digits or base64 of 32 bytes. The message never quotes a key. */
export function parseKeyRing(text: string, where: string): Buffer[] {
  const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new SecretKeyError(`${where} holds no key`);
  return parts.map((part, i) => {
    const key = /^[0-9a-fA-F]{64}$/.test(part) ? Buffer.from(part, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(part) ? Buffer.from(part, 'base64') : undefined;
    if (!key || key.length !== SECRET_KEY_BYTES) {
      throw new SecretKeyError(`key ${i + 1} in ${where} is not ${SECRET_KEY_BYTES} bytes written as 64 hex digits or as base64 (make one with: openssl rand -base64 32)`);
    }
    return key;
  });
}
