import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import Keyv from 'keyv';
import { ensureParentDir, makePrivate, tightenIfPresent } from './private-file';
import { NoSecretBox, type SecretBox } from './secrets/secret-box';
import { directStep, type Collection, type StoreBackend, type StoreStep } from './store-backend';
import { scanStartTime, type LogEntry, type LogPage, type LogQuery } from './log-entry';
import { foldIntoBuckets, type SpendBucket } from './spend-rollup';
import { walWritebackFor, type WalWriteback } from './wal-writeback';
import { leftJournals, LogJournal, readJournal, removeFile, type JournalMark, type JournalRow } from './log-journal';

/**
 * `sqlite://PATH`: the embedded default. One file that survives restarts and crashes (WAL journal).
 * better-sqlite3 is synchronous; every statement here is a few microseconds on a local file.
 */
interface CounterAdd {
  key: string;
  amount: number;
  ttlMs: number | undefined;
  /** the counter's value after this addition (set inside the transaction) */
  total: number;
  resolve(total: number): void;
  reject(err: unknown): void;
}

/** pages of WAL after which a commit checkpoints it (see the constructor) */
const WAL_AUTOCHECKPOINT_PAGES = 8000;
/** a batch's rows go in INSERTs of this many at most */
const LOG_ROWS_PER_INSERT = 16;
/**
 * How long journaled log rows wait for their commit (log-journal.ts): about 25 turns' rows in one commit
 * under load. Reads through this store commit first; other processes on the file see rows this much later.
 */
const COMMIT_EVERY_MS = 20;
/** rows a log query reads (by `seq`) before the event loop gets a turn: about 10 ms of SQLite's work at most */
const LOG_QUERY_WINDOW = 20_000;
/** rows a log scan reads at a time before the event loop gets a turn */
const LOG_SCAN_PAGE = 2000;
/** rows that are committed at once rather than waiting for the timer */
const COMMIT_AT_ROWS = 2000;
/** journaled rows held in memory while commits fail (a locked or full database); beyond, appends are refused */
const MAX_UNCOMMITTED_ROWS = 50_000;
/** a journal is emptied after a commit once it holds this many bytes */
const JOURNAL_EMPTY_AT_BYTES = 4 * 1024 * 1024;
/** how soon a failed commit is tried again */
const COMMIT_RETRY_MS = 1000;

export class SqliteBackend implements StoreBackend {
  readonly kind = 'sqlite' as const;
  readonly db: Database.Database;
  private readonly keyvs = new Map<string, Keyv>();
  private readonly stmt;
  private readonly counterTransaction: Database.Transaction<(adds: CounterAdd[]) => void>;
  /** counter additions asked for in this turn, written together at its end (see incrByFloat) */
  private counterAdds: CounterAdd[] = [];
  /** multi-row log INSERTs by row count (1 to LOG_ROWS_PER_INSERT) */
  private readonly logInserts = new Map<number, Database.Statement>();
  private readonly logTransaction: Database.Transaction<(rows: JournalRow[], journal?: JournalMark) => void>;
  /** this store's journal of log rows taken and not yet committed (none for ':memory:') */
  private readonly journal: LogJournal | undefined;
  /** those rows, and the timer of their commit */
  private uncommitted: JournalRow[] = [];
  private commitTimer: NodeJS.Timeout | undefined;
  /** the WAL's pages go to disk between checkpoints, off the event loop (see walWritebackFor for when none) */
  private readonly walWriteback: WalWriteback | undefined;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
    readonly secretBox: SecretBox = new NoSecretBox(),
  ) {
    if (file !== ':memory:') {
      // Owner-only from the first byte: SQLite gives the WAL, shared-memory and journal files the mode of
      // the database file, and a file an older version created 0644 is tightened before it is opened.
      ensureParentDir(file);
      makePrivate(file);
      tightenIfPresent(['-wal', '-shm', '-journal'].map((suffix) => file + suffix));
    }
    this.db = new Database(file);
    this.journal = file === ':memory:' ? undefined : LogJournal.forProcess(file);
    this.walWriteback = walWritebackFor(file);
    // WAL with synchronous=NORMAL: a commit is appended to the WAL without an fsync, so it survives the
    // process dying (SIGKILL, a crash: the OS holds the write) and only a power loss can undo the last
    // commits (never corrupt the file). FULL would fsync every commit, on the request path.
    useWal(this.db);
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    // The checkpoint copying the WAL into the file runs inside a commit, on the event loop, with two
    // fsyncs (the first, of the WAL, has little left to do: WalWriteback syncs it off the loop). The log
    // rewrites the same few pages (the table's last leaf, its index, the rollup row) on every commit, so
    // a longer WAL between checkpoints copies each of them once for many commits: 8,000 pages (32 MiB of
    // WAL at most) instead of SQLite's 1,000 means an eighth of the checkpoints.
    this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    // logs.seq is a plain rowid (max + 1), not AUTOINCREMENT, which would also rewrite sqlite_sequence's
    // page on every commit; a seq is only reused once every later row is gone (the whole log swept), when
    // no cursor into it is left. A file an older version made keeps its AUTOINCREMENT table: both work.
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER);
      CREATE TABLE IF NOT EXISTS records (collection TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (collection, id));
      CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value REAL NOT NULL, expires_at INTEGER);
      CREATE TABLE IF NOT EXISTS logs (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, key_id TEXT, org TEXT, model TEXT, entry TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS logs_time ON logs (time);
      CREATE INDEX IF NOT EXISTS kv_expires ON kv (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE IF NOT EXISTS recent (list TEXT PRIMARY KEY, ids TEXT NOT NULL, expires_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS recent_expires ON recent (expires_at);
      CREATE TABLE IF NOT EXISTS spend_rollup (bucket TEXT PRIMARY KEY, hour TEXT NOT NULL, key_id TEXT, org TEXT, model TEXT, deployment_id TEXT,
        cost REAL NOT NULL, requests INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS spend_rollup_hour ON spend_rollup (hour);
      CREATE TABLE IF NOT EXISTS log_journals (name TEXT PRIMARY KEY, committed INTEGER NOT NULL);
    `);
    this.stmt = {
      kvGet: this.db.prepare('SELECT value, expires_at FROM kv WHERE key = ?'),
      kvSet: this.db.prepare('INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at'),
      kvDelete: this.db.prepare('DELETE FROM kv WHERE key = ?'),
      kvClear: this.db.prepare('DELETE FROM kv WHERE key LIKE ?'),
      recGet: this.db.prepare('SELECT value FROM records WHERE collection = ? AND id = ?'),
      recSet: this.db.prepare('INSERT INTO records (collection, id, value) VALUES (?, ?, ?) ON CONFLICT(collection, id) DO UPDATE SET value = excluded.value'),
      recDelete: this.db.prepare('DELETE FROM records WHERE collection = ? AND id = ?'),
      recAll: this.db.prepare('SELECT value FROM records WHERE collection = ? ORDER BY rowid'),
      recEntries: this.db.prepare('SELECT id, value FROM records WHERE collection = ? ORDER BY rowid'),
      recReplace: this.db.prepare('UPDATE records SET value = ? WHERE collection = ? AND id = ? AND value = ?'),
      counterGet: this.db.prepare('SELECT value, expires_at FROM counters WHERE key = ?'),
      counterSet: this.db.prepare('INSERT INTO counters (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at'),
      rollupAdd: this.db.prepare(
        `INSERT INTO spend_rollup (bucket, hour, key_id, org, model, deployment_id, cost, requests, prompt_tokens, completion_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(bucket) DO UPDATE SET cost = cost + excluded.cost, requests = requests + excluded.requests, prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens`,
      ),
      rollupRange: this.db.prepare('SELECT hour, key_id, org, model, deployment_id, cost, requests, prompt_tokens, completion_tokens FROM spend_rollup WHERE hour >= ? AND hour < ?'),
      logSweep: this.db.prepare('DELETE FROM logs WHERE seq IN (SELECT seq FROM logs WHERE time < ? ORDER BY time LIMIT ?)'),
      // in `seq` order: the time index would have every matching row sorted for each page
      logScanPage: this.db.prepare('SELECT seq, entry FROM logs NOT INDEXED WHERE seq > ? AND time >= ? ORDER BY seq LIMIT ?'),
      logFirstAt: this.db.prepare('SELECT seq FROM logs INDEXED BY logs_time WHERE time >= ? ORDER BY time LIMIT 1'),
      logBounds: this.db.prepare('SELECT min(seq) AS first, max(seq) AS last FROM logs'),
      recentGet: this.db.prepare('SELECT ids, expires_at FROM recent WHERE list = ?'),
      recentSet: this.db.prepare('INSERT INTO recent (list, ids, expires_at) VALUES (?, ?, ?) ON CONFLICT(list) DO UPDATE SET ids = excluded.ids, expires_at = excluded.expires_at'),
      kvSweep: this.db.prepare('DELETE FROM kv WHERE rowid IN (SELECT rowid FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)'),
      recentSweep: this.db.prepare('DELETE FROM recent WHERE rowid IN (SELECT rowid FROM recent WHERE expires_at <= ? LIMIT ?)'),
      counterSweep: this.db.prepare('DELETE FROM counters WHERE rowid IN (SELECT rowid FROM counters WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)'),
      journalGet: this.db.prepare('SELECT committed FROM log_journals WHERE name = ?'),
      journalSet: this.db.prepare('INSERT INTO log_journals (name, committed) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET committed = excluded.committed'),
      journalDelete: this.db.prepare('DELETE FROM log_journals WHERE name = ?'),
    };
    // the counter additions of one event-loop turn, in the order they were asked for, each seeing the ones
    // before it: the same totals as one transaction each, for one commit
    this.counterTransaction = this.db.transaction((adds: CounterAdd[]): void => {
      const t = this.now();
      for (const add of adds) {
        const row = this.stmt.counterGet.get(add.key) as { value: number; expires_at: number | null } | undefined;
        const live = row && (row.expires_at === null || row.expires_at > t);
        // floored at 0 like Redis: a refund larger than the count (it reached a counter that started again,
        // or came twice) would otherwise leave credit that lets the period spend past its limit
        add.total = Math.max(0, (live ? row.value : 0) + add.amount);
        const expiresAt = live ? row.expires_at : add.ttlMs ? t + add.ttlMs : null;
        this.stmt.counterSet.run(add.key, add.total, expiresAt);
      }
    });
    // made once: better-sqlite3 builds a wrapper (and its BEGIN/COMMIT statements) per transaction() call
    // with the journal's committed offset, in the rows' transaction: a row is either in the table or after it
    this.logTransaction = this.db.transaction((rows: JournalRow[], journal?: JournalMark) => {
      for (let i = 0; i < rows.length; i += LOG_ROWS_PER_INSERT) this.insertLogRows(rows.slice(i, i + LOG_ROWS_PER_INSERT));
      this.addBuckets(foldIntoBuckets(rows.map((r) => r.entry)));
      if (journal) this.stmt.journalSet.run(journal.name, journal.offset);
    });
    this.backfillRollups();
    if (this.journal) this.replayLeftJournals(file);
  }

  keyv(namespace: string): Keyv {
    let kv = this.keyvs.get(namespace);
    if (!kv) {
      kv = new Keyv({ store: this.keyvAdapter(), namespace });
      this.keyvs.set(namespace, kv);
    }
    return kv;
  }

  /** A Map-like store for keyv over the kv table; keyv handles serialisation and namespacing. */
  private keyvAdapter() {
    const { stmt, now } = this;
    return {
      get(key: string) {
        const row = stmt.kvGet.get(key) as { value: string; expires_at: number | null } | undefined;
        if (!row) return undefined;
        if (row.expires_at !== null && row.expires_at <= now()) {
          stmt.kvDelete.run(key);
          return undefined;
        }
        return row.value;
      },
      set(key: string, value: string, ttl?: number) {
        stmt.kvSet.run(key, value, ttl ? now() + ttl : null);
        return true;
      },
      delete(key: string) {
        return stmt.kvDelete.run(key).changes > 0;
      },
      clear() {
        stmt.kvClear.run('%');
      },
      has(key: string) {
        return this.get(key) !== undefined;
      },
    };
  }

  collection<T>(name: string): Collection<T> {
    const { stmt } = this;
    return {
      async get(id) {
        const row = stmt.recGet.get(name, id) as { value: string } | undefined;
        return row ? (JSON.parse(row.value) as T) : undefined;
      },
      async set(id, value) {
        stmt.recSet.run(name, id, JSON.stringify(value));
      },
      async delete(id) {
        return stmt.recDelete.run(name, id).changes > 0;
      },
      async all() {
        return (stmt.recAll.all(name) as { value: string }[]).map((r) => JSON.parse(r.value) as T);
      },
      async replace(id, expected, next) {
        return stmt.recReplace.run(JSON.stringify(next), name, id, JSON.stringify(expected)).changes > 0;
      },
      async entries() {
        return (stmt.recEntries.all(name) as { id: string; value: string }[]).map((r) => [r.id, JSON.parse(r.value) as T] as [string, T]);
      },
    };
  }

  /** Read, add and write inside one immediate transaction: atomic even across processes on the same file. */
  /**
   * Budget and rate-limit counters (a request's admission and its settle add to them): the additions
   * asked for in one event-loop turn go in one immediate transaction on the next, in order, each
   * answered with the total it made, exactly as if each had had its own transaction (and as atomic
   * across processes on the file), for one commit instead of one per request and counter.
   */
  readonly incrByFloat = (key: string, amount: number, ttlMs?: number): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      if (this.counterAdds.push({ key, amount, ttlMs, total: 0, resolve, reject }) === 1) setImmediate(this.writeCounterAdds);
    });

  private readonly writeCounterAdds = (): void => {
    const adds = this.counterAdds;
    this.counterAdds = [];
    try {
      this.counterTransaction.immediate(adds);
    } catch (err) {
      for (const add of adds) add.reject(err);
      return;
    }
    this.walWriteback?.nudge();
    for (const add of adds) add.resolve(add.total);
  };

  async getCounter(key: string): Promise<number> {
    const row = this.stmt.counterGet.get(key) as { value: number; expires_at: number | null } | undefined;
    if (!row || (row.expires_at !== null && row.expires_at <= this.now())) return 0;
    return row.value;
  }

  async appendLog(entry: LogEntry): Promise<void> {
    return this.appendLogs([entry]);
  }

  /**
   * Rows into the journal now (in the OS's hands when this returns: a SIGKILL loses none of them), into the
   * table with the next commit, at most COMMIT_EVERY_MS later. Without a journal (`:memory:`), committed at once.
   */
  async appendLogs(entries: LogEntry[]): Promise<void> {
    const rows = entries.map((entry) => ({ entry, json: JSON.stringify(entry) }));
    const { journal } = this;
    if (!journal) return this.commitRows(rows);
    if (this.uncommitted.length + rows.length > MAX_UNCOMMITTED_ROWS) {
      // commits have been failing for a while: try once more, and refuse rather than hold more
      this.commitUncommitted();
      if (this.uncommitted.length + rows.length > MAX_UNCOMMITTED_ROWS) throw new Error(`${this.uncommitted.length} log rows wait for a commit that keeps failing`);
    }
    // a journal's name may be left in the table by an earlier process with this pid: it starts from 0
    if (!journal.created) this.stmt.journalDelete.run(journal.name);
    journal.append(rows.map((r) => `${r.json}\n`).join(''));
    for (const row of rows) this.uncommitted.push(row);
    if (this.uncommitted.length >= COMMIT_AT_ROWS) this.commitUncommitted();
    else this.commitTimer ??= setTimeout(this.commitUncommitted, COMMIT_EVERY_MS);
  }

  /** the rows and their rollups in one immediate transaction: one commit for the batch, never seen apart */
  private commitRows(rows: JournalRow[], journal?: JournalMark): void {
    this.logTransaction.immediate(rows, journal);
    this.walWriteback?.nudge();
  }

  /**
   * Commit the journaled rows (on the timer, before a read, at close). A failure keeps them, in the
   * journal and here, for the next try; it never reaches the request that logged them.
   */
  private readonly commitUncommitted = (): void => {
    if (this.commitTimer) clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    const journal = this.journal!;
    const rows = this.uncommitted;
    if (!rows.length) return;
    this.uncommitted = [];
    try {
      this.commitRows(rows, { name: journal.name, offset: journal.size });
    } catch {
      this.uncommitted = rows.concat(this.uncommitted);
      this.commitTimer = setTimeout(this.commitUncommitted, COMMIT_RETRY_MS);
      return;
    }
    if (journal.size >= JOURNAL_EMPTY_AT_BYTES) {
      // emptied, then its offset set back, with nothing appended between: a kill in between leaves an
      // offset past the file's end, which the next process reads as "all committed"
      try {
        journal.empty();
        this.stmt.journalSet.run(journal.name, 0);
      } catch {
        // not emptied, or its offset not set back: the next commit sets the offset to where the file ends
      }
    }
  };

  /** A read of the log or the rollups sees every row this store has taken (a failed commit is retried later). */
  private commitBeforeRead(): void {
    if (this.uncommitted.length) this.commitUncommitted();
  }

  /**
   * Commit what the journals of gone processes hold beyond their committed offset, then remove them. The
   * read and the rows share one immediate transaction: two processes opening the file at once commit
   * each row once. The offset stays at the file's end until the file is gone, so a kill between the two
   * leaves nothing to commit twice.
   */
  private replayLeftJournals(file: string): void {
    for (const left of leftJournals(file)) {
      this.db
        .transaction(() => {
          const committed = (this.stmt.journalGet.get(left.name) as { committed: number } | undefined)?.committed ?? 0;
          const { rows, size } = readJournal(left.file, committed);
          this.logTransaction(rows, { name: left.name, offset: size });
        })
        .immediate();
      removeFile(left.file);
      this.stmt.journalDelete.run(left.name);
    }
  }

  /** One INSERT for up to LOG_ROWS_PER_INSERT rows, its statement prepared once per row count. */
  private insertLogRows(rows: JournalRow[]): void {
    let insert = this.logInserts.get(rows.length);
    if (!insert) {
      insert = this.db.prepare(`INSERT INTO logs (time, key_id, org, model, entry) VALUES ${Array(rows.length).fill('(?, ?, ?, ?, ?)').join(', ')}`);
      this.logInserts.set(rows.length, insert);
    }
    const params: unknown[] = [];
    for (const { entry: e, json } of rows) params.push(e.time, e.keyId, e.org, e.model, json);
    insert.run(params);
  }

  private addBuckets(buckets: Map<string, SpendBucket>): void {
    for (const [id, b] of buckets) this.stmt.rollupAdd.run(id, b.hour, b.keyId, b.org, b.model, b.deploymentId, b.cost, b.requests, b.promptTokens, b.completionTokens);
  }

  /**
   * Schema version 1 (PRAGMA user_version) added the spend rollups: the log a version without them wrote
   * is folded in once, so an upgraded gateway's past spend stays in the views.
   */
  private backfillRollups(): void {
    this.db
      .transaction(() => {
        if ((this.db.pragma('user_version', { simple: true }) as number) >= 1) return;
        // pages rather than one iterator: better-sqlite3 runs no other statement while one iterates
        const page = this.db.prepare('SELECT seq, entry FROM logs WHERE seq > ? ORDER BY seq LIMIT 10000');
        for (let after = 0; ; ) {
          const rows = page.all(after) as { seq: number; entry: string }[];
          if (!rows.length) break;
          this.addBuckets(foldIntoBuckets(rows.map((r) => JSON.parse(r.entry) as LogEntry)));
          after = rows[rows.length - 1].seq;
        }
        this.db.pragma('user_version = 1');
      })
      .immediate();
  }

  async spendBuckets(since?: string, until?: string, step: StoreStep = directStep): Promise<SpendBucket[]> {
    await step(async () => this.commitBeforeRead());
    // ISO strings sort as times; '~' sorts after any of them
    const rows = await step(async () => this.stmt.rollupRange.all(since ?? '', until ?? '~') as { hour: string; key_id: string | null; org: string | null; model: string | null; deployment_id: string | null; cost: number; requests: number; prompt_tokens: number; completion_tokens: number }[]);
    return rows.map((r) => ({ hour: r.hour, keyId: r.key_id, org: r.org, model: r.model, deploymentId: r.deployment_id, cost: r.cost, requests: r.requests, promptTokens: r.prompt_tokens, completionTokens: r.completion_tokens }));
  }

  async sweepLogs(before: string, limit: number): Promise<number> {
    this.commitBeforeRead();
    return this.stmt.logSweep.run(before, limit).changes;
  }

  /**
   * Newest first, read a window of LOG_QUERY_WINDOW rows (by `seq`) at a time with the event loop given a
   * turn between windows. A filter no index serves (status, id, key, organisation) reads rows until it has
   * a page, and better-sqlite3 runs on the event loop: over a table of millions of rows, one statement held
   * every request of every organisation for seconds (an organisation admin's log page, or a lookup of an
   * id that is not there, read the whole table: 0.34 s per 500,000 rows).
   */
  async queryLogs(query: LogQuery, step: StoreStep = directStep): Promise<LogPage> {
    await step(async () => this.commitBeforeRead());
    const where: string[] = ['seq >= ?', 'seq < ?'];
    const params: unknown[] = [];
    if (query.key) (where.push('key_id = ?'), params.push(query.key));
    if (query.org) (where.push('org = ?'), params.push(query.org));
    if (query.model) (where.push('model = ?'), params.push(query.model));
    if (query.since) (where.push('time >= ?'), params.push(query.since));
    if (query.until) (where.push('time < ?'), params.push(query.until));
    // status and id are not columns of their own: read from the stored JSON (SQLite's JSON1 functions)
    if (query.statusMin !== undefined) (where.push("json_extract(entry, '$.status') >= ?"), params.push(query.statusMin));
    if (query.statusMax !== undefined) (where.push("json_extract(entry, '$.status') <= ?"), params.push(query.statusMax));
    if (query.id) (where.push("json_extract(entry, '$.id') = ?"), params.push(query.id));
    const window = this.db.prepare(`SELECT seq, entry FROM logs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`);
    const bounds = this.stmt.logBounds.get() as { first: number | null; last: number | null };
    const rows: { seq: number; entry: string }[] = [];
    let below = query.cursor ? Math.min(Number(query.cursor), (bounds.last ?? 0) + 1) : (bounds.last ?? 0) + 1;
    const first = bounds.first ?? below;
    while (below > first && rows.length <= query.limit) {
      const from = Math.max(first, below - LOG_QUERY_WINDOW);
      const read = await step(async () => window.all(from, below, ...params, query.limit + 1 - rows.length) as { seq: number; entry: string }[]);
      for (const row of read) rows.push(row);
      below = from;
      if (below > first && rows.length <= query.limit) await nextTurn();
    }
    const page = rows.slice(0, query.limit);
    return {
      data: page.map((r) => JSON.parse(r.entry) as LogEntry),
      nextCursor: rows.length > query.limit ? String(page[page.length - 1].seq) : null,
    };
  }

  /**
   * Oldest first, LOG_SCAN_PAGE rows at a time with the event loop given a turn between pages: one statement
   * over a day of a busy gateway's log (the guardrails view) held every request for as long as it read, and
   * a statement left open while the reader's own awaits let other requests run made their statements fail
   * ("This database connection is busy"). The pages follow `seq`, from the first row of `since` found by
   * the time index (a little earlier: scanStartTime).
   */
  async *scanLogs(since?: string): AsyncIterable<LogEntry> {
    this.commitBeforeRead();
    let after = 0;
    if (since) {
      const first = this.stmt.logFirstAt.get(scanStartTime(since) ?? since) as { seq: number } | undefined;
      if (!first) return;
      after = first.seq - 1;
    }
    for (;;) {
      const rows = this.stmt.logScanPage.all(after, since ?? '', LOG_SCAN_PAGE) as { seq: number; entry: string }[];
      for (const row of rows) yield JSON.parse(row.entry) as LogEntry;
      if (rows.length < LOG_SCAN_PAGE) return;
      after = rows[rows.length - 1].seq;
      await nextTurn();
    }
  }

  /** Read, append and write inside one immediate transaction, like the counters. */
  readonly pushRecent = async (list: string, id: string, keep: number, ttlMs: number): Promise<string[]> => {
    return this.db.transaction(() => {
      const t = this.now();
      const row = this.stmt.recentGet.get(list) as { ids: string; expires_at: number } | undefined;
      const ids = row && row.expires_at > t ? (JSON.parse(row.ids) as string[]) : [];
      ids.push(id);
      const dropped = ids.length > keep ? ids.splice(0, ids.length - keep) : [];
      this.stmt.recentSet.run(list, JSON.stringify(ids), t + ttlMs);
      return dropped;
    }).immediate();
  };

  async sweepExpired(limit: number): Promise<number> {
    const t = this.now();
    let removed = 0;
    // values first (responses, hosted images: the big ones), then recent lists and spent counters
    for (const sweep of [this.stmt.kvSweep, this.stmt.recentSweep, this.stmt.counterSweep]) {
      if (removed < limit) removed += sweep.run(t, limit - removed).changes;
    }
    return removed;
  }

  async close(): Promise<void> {
    const { journal } = this;
    if (journal) {
      this.commitUncommitted();
      if (this.commitTimer) clearTimeout(this.commitTimer);
      // all committed: the journal goes; otherwise the next process to open the file commits what it holds
      const done = this.uncommitted.length === 0;
      journal.close(done);
      if (done) this.stmt.journalDelete.run(journal.name);
    }
    this.db.close();
    this.walWriteback?.close();
  }
}

/**
 * Switch a connection to WAL (a setting the file keeps). Processes that open a new file at the same moment
 * (the workers of `--workers N` at their first start) all try to switch it: one gets the lock and the
 * others are refused at once ("database is locked": SQLite does not wait there, as waiting could
 * deadlock). Startup only, so the refused ones wait a little and try again; by then the file is usually
 * in WAL already.
 */
function useWal(db: Database.Database): void {
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || attempt === WAL_SWITCH_ATTEMPTS) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 * attempt);
    }
  }
}

/** tries at switching to WAL before a start fails: about 2 s of waiting in all */
const WAL_SWITCH_ATTEMPTS = 20;
