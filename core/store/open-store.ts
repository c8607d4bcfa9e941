import path from 'node:path';
import { ConfigError } from '../errors/gateway-error';
import type { Logger } from '../plugins/contracts';
import { onFirstUse } from '../plugins/on-first-use';
import { MemoryBackend } from './memory-backend';
import type { SecretBox } from './secrets/secret-box';
import { loadSecretBox } from './secrets/secret-key-source';
import { SqliteBackend } from './sqlite-backend';
import type { StoreBackend } from './store-backend';

export interface OpenStoreOptions {
  /** where GATEWAY_SECRET_KEY and GATEWAY_SECRET_KEY_FILE are read; default process.env */
  env?: NodeJS.ProcessEnv;
  /** told once when a key file is created, and once when `memory://` starts dropping old log rows */
  logger?: Logger;
  /** this key ring instead of the one the environment names (key rotation) */
  secretBox?: SecretBox;
  /** PostgreSQL: the most connections the query pool opens (postgres-pool-size.ts); default 10 */
  poolSize?: number;
  /** PostgreSQL: what to add to the error of a connection the server refused for its connection limit */
  connectionLimitHint?: (err: unknown) => string | undefined;
}

/**
 * The drivers of the network stores (pg, @keyv/redis with its Redis client) are required only for a URL
 * of their kind: a gateway on SQLite or memory never holds their code.
 */
const postgresBackend = onFirstUse(() => (require('./postgres-backend') as typeof import('./postgres-backend')).PostgresBackend);
const redisBackend = onFirstUse(() => (require('./redis-backend') as typeof import('./redis-backend')).RedisBackend);

/** `memory://`, `sqlite://PATH` (relative to the working directory), `redis://HOST:PORT[/DB]` or `postgres://USER:PASSWORD@HOST:PORT/DB`. */
export async function openStore(url: string, now: () => number = Date.now, options: OpenStoreOptions = {}): Promise<StoreBackend> {
  const problem = storeUrlProblem(url);
  if (problem) throw new ConfigError('store.url', problem);
  const secrets = () => options.secretBox ?? loadSecretBox(url, options.env ?? process.env, options.logger);
  if (url === 'memory://' || url === 'memory') return new MemoryBackend(now, secrets(), options.logger);
  if (url.startsWith('sqlite://')) {
    const file = url.slice('sqlite://'.length);
    const box = secrets();
    try {
      return new SqliteBackend(file, now, box);
    } catch (err) {
      // SQLite's own words name neither the setting nor the file ("file is not a database")
      if (err instanceof ConfigError) throw err;
      throw new ConfigError('store.url', `cannot open the SQLite file ${path.resolve(file)}: ${(err as Error).message}`);
    }
  }
  // A network store's key ring is loaded once the server answers: loaded first, a start that could not
  // reach the server had already created ./data/secret.key, a key file for a store that never opened.
  let keyProblem: { err: unknown } | undefined;
  const secretsOnceConnected = () => {
    try {
      return secrets();
    } catch (err) {
      keyProblem = { err };
      throw err;
    }
  };
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    try {
      return await redisBackend().connect(url, now, secretsOnceConnected);
    } catch (err) {
      if (keyProblem) throw keyProblem.err;
      throw new ConfigError('store.url', `cannot connect to Redis: ${(err as Error).message}`);
    }
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    try {
      return await postgresBackend().connect(url, now, secretsOnceConnected, undefined, options.poolSize);
    } catch (err) {
      if (keyProblem) throw keyProblem.err;
      throw new ConfigError('store.url', `cannot open PostgreSQL: ${withoutCredentials((err as Error).message, url)}${options.connectionLimitHint?.(err) ?? ''}`);
    }
  }
  throw new ConfigError('store.url', unsupported(url));
}

/**
 * What is wrong with a store URL before anything is opened: a kind the gateway has no store for, or
 * SQLite without a file. `check` reports it too (it said "valid" and the start then failed).
 */
export function storeUrlProblem(url: string): string | undefined {
  if (url === 'memory://' || url === 'memory') return undefined;
  if (url.startsWith('sqlite://')) return url.length > 'sqlite://'.length ? undefined : 'sqlite:// needs a file path, e.g. sqlite://./data/gateway.db';
  if (/^(?:rediss?|postgres(?:ql)?):\/\//.test(url)) return undefined;
  return unsupported(url);
}

function unsupported(url: string): string {
  return `unsupported store "${withoutCredentials(url, url)}" (use memory://, sqlite://PATH, redis://HOST:PORT or postgres://USER:PASSWORD@HOST:PORT/DB)`;
}

/** A URL's user and password never go into an error (the driver's messages can quote the URL). */
function withoutCredentials(text: string, url: string): string {
  let out = text.replace(/\/\/[^@/]*@/g, '//***@');
  try {
    const { password } = new URL(url);
    if (password) out = out.split(decodeURIComponent(password)).join('***').split(password).join('***');
  } catch {
    /* not a URL: nothing more to hide */
  }
  return out;
}
