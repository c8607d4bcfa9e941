import Keyv from 'keyv';
import KeyvRedis, { createClient } from '@keyv/redis';
import { closedWithin } from './faults/bounded-close';
import { settleWithin } from '../time/settle-within';
import { directStep, type Collection, type StoreBackend, type StoreStep } from './store-backend';
import { NoSecretBox, type SecretBox } from './secrets/secret-box';
import { keyvExpiry, stampExpiry } from './keyv-expiry';
import { matchesLogQuery, scanStartTime, type LogEntry, type LogPage, type LogQuery } from './log-entry';
import { foldIntoBuckets, type SpendBucket } from './spend-rollup';

type RedisClient = ReturnType<typeof createClient>;

/** How long a start waits for Redis to answer, as for PostgreSQL (connectionTimeoutMillis). */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * `redis://HOST:PORT`: shared state for several gateway instances. Collections are hashes, counters use
 * INCRBYFLOAT (atomic on the server), the log is a list (newest first) cut by the retention sweep, and
 * spend rollups are one hash per hour (fields `c|r|p|o` + bucket id: cost, requests, prompt and
 * completion tokens) listed in a sorted set of hours.
 */
export class RedisBackend implements StoreBackend {
  readonly kind = 'redis' as const;
  private readonly keyvs = new Map<string, Keyv>();
  private readonly prefix = 'mg:';
  /** where the sweep's SCAN goes on next time ('0': from the start) */
  private sweepCursor = '0';

  private constructor(
    private readonly client: RedisClient,
    private readonly url: string,
    private readonly now: () => number,
    readonly secretBox: SecretBox,
  ) {}

  /** `secretBox` may be given as a function: it is then called once the server answers (see openStore). */
  static async connect(url: string, now: () => number = Date.now, secretBox: SecretBox | (() => SecretBox) = new NoSecretBox()): Promise<RedisBackend> {
    let connected = false;
    // Reconnect after a connection that worked is lost; a server that cannot be reached at boot fails the
    // start (the client's default is to retry forever, and the gateway would hang without a word).
    const reconnectStrategy = (retries: number, cause: Error) => (connected ? Math.min(retries * 50, 500) : cause);
    // While disconnected, commands fail at once rather than wait in a queue for the server to come back:
    // a request under a budget would otherwise never get an answer.
    const client = createClient({ url, socket: { reconnectStrategy }, disableOfflineQueue: true });
    client.on('error', () => {
      /* reconnects on its own; the failing command reports the error */
    });
    // A server that takes the connection and never answers (frozen, a hung host) hung the start without a
    // word too: the client's handshake and the first commands have no timeout of their own.
    try {
      // a PING: a connection without a password or database may be made without a word from the server
      await settleWithin(
        client.connect().then(() => client.ping()),
        CONNECT_TIMEOUT_MS,
        () => {
          throw new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`);
        },
      );
      connected = true;
      const box = typeof secretBox === 'function' ? secretBox() : secretBox;
      const backend = new RedisBackend(client as unknown as RedisClient, url, now, box);
      // not under the 5 s: the one-time backfill of a large log may take longer, and one cut short would
      // never be done again (its flag is set first)
      await backend.backfillRollups();
      return backend;
    } catch (err) {
      if (client.isOpen) client.destroy();
      throw err;
    }
  }

  keyv(namespace: string): Keyv {
    let kv = this.keyvs.get(namespace);
    if (!kv) {
      kv = stampExpiry(new Keyv({ store: new KeyvRedis(this.client as never, { throwOnErrors: true }), namespace: `${this.prefix}${namespace}` }), this.now);
      this.keyvs.set(namespace, kv);
    }
    return kv;
  }

  collection<T>(name: string): Collection<T> {
    const { client } = this;
    const key = `${this.prefix}c:${name}`;
    return {
      async get(id) {
        const raw = await client.hGet(key, id);
        return raw == null ? undefined : (JSON.parse(raw) as T);
      },
      async set(id, value) {
        await client.hSet(key, id, JSON.stringify(value));
      },
      async delete(id) {
        return (await client.hDel(key, id)) > 0;
      },
      async all() {
        const map = await client.hGetAll(key);
        return Object.values(map).map((raw) => JSON.parse(raw) as T);
      },
      async replace(id, expected, next) {
        // compare and set in one server-side step
        const done = await client.eval(HASH_REPLACE, { keys: [key], arguments: [id, JSON.stringify(expected), JSON.stringify(next)] });
        return done === 1;
      },
      async entries() {
        const map = await client.hGetAll(key);
        return Object.entries(map).map(([id, raw]) => [id, JSON.parse(raw) as T] as [string, T]);
      },
    };
  }

  async incrByFloat(key: string, amount: number, ttlMs?: number): Promise<number> {
    return incrByFloatWithTtl(this.client, `${this.prefix}n:${key}`, amount, ttlMs);
  }

  async getCounter(key: string): Promise<number> {
    const raw = await this.client.get(`${this.prefix}n:${key}`);
    return raw == null ? 0 : Number(raw);
  }

  async appendLog(entry: LogEntry): Promise<void> {
    return this.appendLogs([entry]);
  }

  /**
   * Number the batch and push it (one script: APPEND_LOGS), and add its rollups, in one MULTI. Numbering
   * and pushing in two round trips let another instance push between them, and the list then held a
   * higher number below a lower one, which a page's cursor (`seq < cursor`) skipped for good.
   */
  async appendLogs(entries: LogEntry[]): Promise<void> {
    if (!entries.length) return;
    const multi = this.client.multi().eval(APPEND_LOGS, { keys: [`${this.prefix}logseq`, `${this.prefix}logs`], arguments: entries.map(logRowJson) });
    this.addBuckets(multi, foldIntoBuckets(entries));
    await multi.exec();
  }

  private addBuckets(multi: ReturnType<RedisClient['multi']>, buckets: Map<string, SpendBucket>): void {
    for (const [id, b] of buckets) {
      const hash = `${this.prefix}spend:${b.hour}`;
      multi.hIncrByFloat(hash, `c${id}`, b.cost).hIncrBy(hash, `r${id}`, b.requests).hIncrBy(hash, `p${id}`, b.promptTokens).hIncrBy(hash, `o${id}`, b.completionTokens);
      multi.zAdd(`${this.prefix}spend:hours`, { score: Date.parse(b.hour), value: b.hour });
    }
  }

  /**
   * Once per Redis database: the log written before rollups existed is folded into them, so an upgraded
   * gateway's past spend stays in the views (SET NX elects the one instance that does it).
   */
  private async backfillRollups(): Promise<void> {
    if ((await this.client.set(`${this.prefix}spend:backfilled`, '1', { NX: true })) !== 'OK') return;
    const raws = await this.client.lRange(`${this.prefix}logs`, 0, -1);
    if (!raws.length) return;
    const multi = this.client.multi();
    this.addBuckets(multi, foldIntoBuckets(raws.map((raw) => (JSON.parse(raw) as { entry: LogEntry }).entry)));
    await multi.exec();
  }

  async spendBuckets(since?: string, until?: string, step: StoreStep = directStep): Promise<SpendBucket[]> {
    const hours = await step(() => this.client.zRangeByScore(`${this.prefix}spend:hours`, since ? Date.parse(since) : '-inf', until ? `(${Date.parse(until)}` : '+inf'));
    const buckets = new Map<string, SpendBucket>();
    for (let i = 0; i < hours.length; i += SPEND_HOURS_PER_READ) {
      const day = hours.slice(i, i + SPEND_HOURS_PER_READ);
      for (const hash of await step(() => Promise.all(day.map((hour) => this.client.hGetAll(`${this.prefix}spend:${hour}`))))) this.foldHash(hash, buckets);
    }
    return [...buckets.values()];
  }

  /** one hour's hash (fields `c|r|p|o` + bucket id) added to the buckets */
  private foldHash(hash: Record<string, string>, buckets: Map<string, SpendBucket>): void {
    for (const [field, value] of Object.entries(hash)) {
      const id = field.slice(1);
      let b = buckets.get(id);
      if (!b) {
        const [hour, keyId, org, model, deploymentId] = JSON.parse(id) as [string, string | null, string | null, string | null, string | null];
        buckets.set(id, (b = { hour, keyId, org, model, deploymentId, cost: 0, requests: 0, promptTokens: 0, completionTokens: 0 }));
      }
      const n = Number(value);
      if (field[0] === 'c') b.cost = n;
      else if (field[0] === 'r') b.requests = n;
      else if (field[0] === 'p') b.promptTokens = n;
      else b.completionTokens = n;
    }
  }

  /**
   * The oldest entries are at the tail: the last `limit` are read, the run older than `before` counted and
   * trimmed off, in one script (SWEEP_LOGS). Read and trim in two round trips let two instances sweeping
   * at once (every `--workers` worker sweeps on the same tick) both trim the run the first one read, the
   * second cutting as many rows still within retention.
   */
  async sweepLogs(before: string, limit: number): Promise<number> {
    return Number(await this.client.eval(SWEEP_LOGS, { keys: [`${this.prefix}logs`], arguments: [before, String(limit)] }));
  }

  async queryLogs(query: LogQuery, step: StoreStep = directStep): Promise<LogPage> {
    const key = `${this.prefix}logs`;
    let before = query.cursor ? Number(query.cursor) : Infinity;
    const data: { seq: number; entry: LogEntry }[] = [];
    const pageSize = 500;
    for (let start = 0; ; start += pageSize) {
      const raws = await step(() => this.client.lRange(key, start, start + pageSize - 1));
      for (const raw of raws) {
        const row = JSON.parse(raw) as { seq: number; entry: LogEntry };
        // The list is in falling numbers, and reads go by position: rows pushed at its head between two
        // reads move the rows already read into the next one. Only a lower number is a row not seen yet.
        if (row.seq >= before) continue;
        before = row.seq;
        if (!matchesLogQuery(row.entry, query)) continue;
        if (data.length === query.limit) return { data: data.map((r) => r.entry), nextCursor: String(data[data.length - 1].seq) };
        data.push(row);
      }
      if (raws.length < pageSize) break;
    }
    return { data: data.map((r) => r.entry), nextCursor: null };
  }

  /**
   * Oldest first, SCAN_PAGE rows a read (the store guard times each step of a scan): the whole list in one
   * read outlasted the store timeout at 300,000 rows, and the guardrails view answered 503
   * store_unavailable. Each read starts after the last row read, found by its number (LOG_PAGE_AFTER), so
   * rows pushed at the head or swept off the tail meanwhile neither repeat nor skip a row.
   */
  async *scanLogs(since?: string): AsyncIterable<LogEntry> {
    // numbers start at 1; with `since`, after the rows well before it (a step that yields nothing must
    // still be short: 200,000 rows older than a day were read in one)
    const from = since ? scanStartTime(since) : undefined;
    let last = from === undefined ? 0 : Number(await this.client.eval(LOG_SEQ_BEFORE, { keys: [`${this.prefix}logs`], arguments: [from] }));
    for (;;) {
      const raws = (await this.client.eval(LOG_PAGE_AFTER, { keys: [`${this.prefix}logs`], arguments: [String(last), String(SCAN_PAGE)] })) as string[];
      for (let i = raws.length - 1; i >= 0; i--) {
        const { seq, entry } = JSON.parse(raws[i]) as { seq: number; entry: LogEntry };
        if (seq <= last) continue;
        last = seq;
        if (!since || entry.time >= since) yield entry;
      }
      if (raws.length < SCAN_PAGE) return;
    }
  }

  /** RPUSH, read what is beyond the newest `keep`, trim and set the expiry, in one MULTI. */
  async pushRecent(list: string, id: string, keep: number, ttlMs: number): Promise<string[]> {
    const key = `${this.prefix}recent:${list}`;
    const [, dropped] = (await this.client.multi().rPush(key, id).lRange(key, 0, -keep - 1).lTrim(key, -keep, -1).pExpire(key, ttlMs).exec()) as unknown as [number, string[]];
    return dropped;
  }

  /**
   * Redis drops a keyv value when its own TTL passes; this sweep also honours the gateway's clock, which
   * decides expiry everywhere else. It walks the keyspace with SCAN, examining at most ten batches' worth
   * of keys per call, and resumes where it stopped on the next call (a step with more expired keys than
   * the batch has room for is scanned again). Recent lists carry a Redis TTL.
   */
  async sweepExpired(limit: number): Promise<number> {
    let examined = 0;
    let removed = 0;
    do {
      const from = this.sweepCursor;
      const { cursor, keys } = await this.client.scan(from, { MATCH: `${this.prefix}*`, COUNT: limit, TYPE: 'string' });
      examined += keys.length;
      const raws = keys.length ? await this.client.mGet(keys) : [];
      const now = this.now();
      const expired = keys.filter((_, i) => keyvExpiry(raws[i]) <= now);
      const room = limit - removed;
      if (expired.length) removed += Number(await this.client.del(expired.slice(0, room)));
      if (expired.length > room) break; // the cursor stays: this step's other expired keys come next time
      this.sweepCursor = String(cursor);
    } while (this.sweepCursor !== '0' && examined < 10 * limit && removed < limit);
    return removed;
  }

  async close(): Promise<void> {
    const clean = (async () => {
      for (const kv of this.keyvs.values()) await kv.disconnect().catch(() => undefined);
      // QUIT waits for a server that is not there: a client without a connection is just dropped
      if (this.client.isReady) await this.client.quit().catch(() => undefined);
      else if (this.client.isOpen) this.client.destroy();
    })();
    // a frozen server answers neither QUIT nor the commands still waiting: drop the connection
    if (!(await closedWithin(clean)) && this.client.isOpen) this.client.destroy();
  }
}

/**
 * Number a batch of log entries (ARGV, each an entry's JSON) from the sequence KEYS[1] and push them onto
 * the list KEYS[2], newest at the head, as `{"seq":N,"entry":...}`: what JSON.stringify({ seq, entry })
 * writes. Pushed a thousand at a time (Lua's unpack has a limit).
 */
const APPEND_LOGS = `
local n = #ARGV
local first = redis.call('INCRBY', KEYS[1], n) - n
local rows = {}
for i = 1, n do
  rows[#rows + 1] = '{"seq":' .. string.format('%d', first + i) .. ',"entry":' .. ARGV[i] .. '}'
  if #rows == 1000 or i == n then
    redis.call('LPUSH', KEYS[2], unpack(rows))
    rows = {}
  end
end
return n`;

/** a high surrogate not followed by a low one, or a low one not after a high one */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * An entry's JSON as the scripts below can read it. JSON.stringify writes a lone surrogate (a client's
 * model name "\ud800", say) as an escape that Redis's cjson refuses: a row with one at the tail of the list
 * stopped the retention sweep there for good, and the scan's next read started over at the tail for ever.
 * Such a string is written with U+FFFD in its place (a paired surrogate is written as it is: no escape).
 */
function logRowJson(entry: LogEntry): string {
  const json = JSON.stringify(entry);
  return json.includes('\\ud') ? JSON.stringify(entry, (_key, value: unknown) => (typeof value === 'string' ? value.replace(LONE_SURROGATE, '\uFFFD') : value)) : json;
}

/** Trim the run of entries older than ARGV[1] off the tail of the list KEYS[1], looking at ARGV[2] at most. */
const SWEEP_LOGS = `
local raws = redis.call('LRANGE', KEYS[1], -tonumber(ARGV[2]), -1)
local n = 0
for i = #raws, 1, -1 do
  local ok, row = pcall(cjson.decode, raws[i])
  if not ok or type(row) ~= 'table' or type(row.entry) ~= 'table' or type(row.entry.time) ~= 'string' or row.entry.time >= ARGV[1] then break end
  n = n + 1
end
if n > 0 then redis.call('LTRIM', KEYS[1], 0, -(n + 1)) end
return n`;

/** the spend hours read at once (a day): each read is one store command for the guard's timeout */
const SPEND_HOURS_PER_READ = 24;

/** log rows a read of scanLogs takes */
const SCAN_PAGE = 2000;

/**
 * Up to ARGV[2] rows of the log list KEYS[1] numbered after ARGV[1], the oldest at the end (list order).
 * Numbers run on by one from the tail to the head (APPEND_LOGS), so the row after N sits N + 1 - tail's
 * number rows from the tail, wherever the head and the tail have moved since.
 */
const LOG_PAGE_AFTER = `
local tail = redis.call('LINDEX', KEYS[1], -1)
if not tail then return {} end
local ok, row = pcall(cjson.decode, tail)
local offset = 0
if ok and type(row) == 'table' and type(row.seq) == 'number' then offset = math.max(0, tonumber(ARGV[1]) + 1 - row.seq) end
local n = tonumber(ARGV[2])
return redis.call('LRANGE', KEYS[1], -(offset + n), -(offset + 1))`;

/**
 * The number of the newest row of the log list KEYS[1] in the run of its oldest rows timed before ARGV[1]
 * (0: none), found by halving: rows are numbered, and about timed, in the order of the list.
 */
const LOG_SEQ_BEFORE = `
local lo, hi = 0, redis.call('LLEN', KEYS[1])
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  local ok, row = pcall(cjson.decode, redis.call('LINDEX', KEYS[1], -(mid + 1)))
  if ok and type(row) == 'table' and type(row.entry) == 'table' and type(row.entry.time) == 'string' and row.entry.time < ARGV[1] then lo = mid + 1 else hi = mid end
end
if lo == 0 then return 0 end
local ok, row = pcall(cjson.decode, redis.call('LINDEX', KEYS[1], -lo))
if ok and type(row) == 'table' and type(row.seq) == 'number' then return row.seq end
return 0`;

/** HSET a field only if it still holds the expected value. */
const HASH_REPLACE = "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) return 1 end return 0";

/**
 * INCRBYFLOAT on a counter that expires `ttlMs` after it was created, in one script: the counter is
 * created at 0 with its expiry if it is not there (SET NX PX), then incremented (which keeps the expiry).
 * Not PEXPIRE ... NX, which only Redis 7 has: on Redis 6 the whole transaction was refused, and with it
 * every rate limit and periodic budget.
 *
 * A counter never goes below zero: only corrections subtract, and one for a request admitted before
 * Redis lost its data (restarted empty, or failed over to a replica behind) found no counter and left
 * minus the reservation, handing the key that much extra budget or rate for the period.
 */
async function incrByFloatWithTtl(client: RedisClient, key: string, amount: number, ttlMs?: number): Promise<number> {
  return Number(await client.eval(INCR_COUNTER, { keys: [key], arguments: [String(amount), ttlMs ? String(ttlMs) : ''] }));
}

/** Add ARGV[1] to the counter KEYS[1], created with an expiry of ARGV[2] ms (none if empty), floored at 0. */
const INCR_COUNTER = `
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], '0', 'PX', ARGV[2], 'NX') end
local value = redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])
if tonumber(value) < 0 then
  redis.call('SET', KEYS[1], '0', 'KEEPTTL')
  return '0'
end
return value`;
