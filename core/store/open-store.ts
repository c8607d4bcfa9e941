import { ConfigError } from '../errors/gateway-error';
import { MemoryBackend } from './memory-backend';
import { RedisBackend } from './redis-backend';
import { SqliteBackend } from './sqlite-backend';
import type { StoreBackend } from './store-backend';

/** `memory://`, `sqlite://PATH` (relative to the working directory) or `redis://HOST:PORT[/DB]`. */
export async function openStore(url: string, now: () => number = Date.now): Promise<StoreBackend> {
  if (url === 'memory://' || url === 'memory') return new MemoryBackend(now);
  if (url.startsWith('sqlite://')) {
    const file = url.slice('sqlite://'.length);
    if (!file) throw new ConfigError('store.url', 'sqlite:// needs a file path, e.g. sqlite://./data/gateway.db');
    return new SqliteBackend(file, now);
  }
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    try {
      return await RedisBackend.connect(url, now);
    } catch (err) {
      throw new ConfigError('store.url', `cannot connect to Redis: ${(err as Error).message}`);
    }
  }
  throw new ConfigError('store.url', `unsupported store "${url.replace(/\/\/[^@/]*@/, '//***@')}" (use memory://, sqlite://PATH or redis://HOST:PORT)`);
}
