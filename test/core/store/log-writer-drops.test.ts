import { expect } from 'chai';
import { createLogger } from '../../../core/observability/logger';
import { LogWriter } from '../../../core/store/log-writer';
import type { LogEntry } from '../../../core/store/log-entry';
import { SqliteBackend } from '../../../core/store/sqlite-backend';

function entry(i: number): LogEntry {
  return { id: `e${i}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), keyId: 'k', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 2, cost: 0.25, status: 200, latencyMs: 1 };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('log writer: the bounded retry queue in front of a failing store (in-memory SQLite: no journal, a write is its commit)', () => {
  it('keeps the oldest maxQueued entries, drops and counts the rest with one error line, and writes the kept ones in order once the store is back', async () => {
    const store = new SqliteBackend(':memory:');
    const lines: { msg: string; dropped?: number; maxQueued?: number }[] = [];
    const logger = createLogger({ level: 'info', write: (line: string) => lines.push(JSON.parse(line)) });
    const writer = new LogWriter(store, logger, { maxQueued: 10, retryDelayMs: 5, maxRetryDelayMs: 20, batchSize: 4 });
    // the store fails every write: the log table is not there (its INSERTs fail "no such table")
    store.db.exec('ALTER TABLE logs RENAME TO logs_away');

    // 6 entries in one turn (one batch), then 4 more turns of 3: 18 entries for a queue of 10
    await Promise.all([0, 1, 2, 3, 4, 5].map((i) => writer.write(entry(i))));
    for (let turn = 0; turn < 4; turn++) await Promise.all([0, 1, 2].map((j) => writer.write(entry(6 + turn * 3 + j))));

    expect(writer.queued, 'kept for retry').to.equal(10);
    expect(writer.dropped, 'given up').to.equal(8);
    expect(writer.written).to.equal(0);
    const dropLines = lines.filter((l) => l.msg === 'request log queue full; entries dropped');
    expect(dropLines.map((l) => [l.dropped, l.maxQueued]), 'one line for the first drop, not one per entry').to.deep.equal([[2, 10]]);

    // the store answers again: the queue drains in order, each kept entry written once
    store.db.exec('ALTER TABLE logs_away RENAME TO logs');
    await until(() => writer.queued === 0);
    expect(writer.queued).to.equal(0);
    expect(writer.written).to.equal(10);
    const rows = (store.db.prepare('SELECT entry FROM logs ORDER BY seq').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as LogEntry).id);
    expect(rows).to.deep.equal(Array.from({ length: 10 }, (_, i) => `e${i}`));
    const buckets = await store.spendBuckets();
    expect(buckets.map((b) => [b.requests, b.cost])).to.deep.equal([[10, 2.5]]);
    expect(lines.some((l) => l.msg === 'request log caught up after store errors')).to.equal(true);

    // new entries go straight through again, nothing more dropped
    await writer.write(entry(50));
    expect(writer.written).to.equal(11);
    expect(writer.dropped).to.equal(8);
    await store.close();
  });

  it('counts the entries still queued at drain as dropped, with their number in the log', async () => {
    const store = new SqliteBackend(':memory:');
    const lines: { msg: string; dropped?: number }[] = [];
    const logger = createLogger({ level: 'info', write: (line: string) => lines.push(JSON.parse(line)) });
    const writer = new LogWriter(store, logger, { maxQueued: 100, retryDelayMs: 5, maxRetryDelayMs: 20 });
    store.db.exec('ALTER TABLE logs RENAME TO logs_away');
    await Promise.all([0, 1, 2].map((i) => writer.write(entry(i))));
    expect(writer.queued).to.equal(3);
    await writer.flush(50);
    expect(writer.dropped).to.equal(3);
    expect(lines.filter((l) => l.msg === 'request log entries not written before shutdown').map((l) => l.dropped)).to.deep.equal([3]);
    await store.close();
  });

  it('narrows a batch the store keeps refusing down to the entries it refuses: those are dropped and named, every other entry is written in order', async () => {
    const store = new SqliteBackend(':memory:');
    const lines: { msg: string; level: string; requestId?: string; org?: string }[] = [];
    const logger = createLogger({ level: 'info', write: (line: string) => lines.push(JSON.parse(line)) });
    const writer = new LogWriter(store, logger, { maxQueued: 1000, retryDelayMs: 1, maxRetryDelayMs: 5, batchSize: 500 });
    // the store refuses three rows, two of them side by side, and only those (as PostgreSQL refuses a
    // value past a column's limit)
    const refusedIds = ['e13', 'e14', 'e30'];
    store.db.exec(`CREATE TRIGGER refuse_some BEFORE INSERT ON logs WHEN json_extract(NEW.entry, '$.id') IN ('e13', 'e14', 'e30') BEGIN SELECT RAISE(ABORT, 'refused'); END`);

    // 40 entries in one turn (one batch, refused whole), then a few more turns while it is retried
    await Promise.all(Array.from({ length: 40 }, (_, i) => writer.write(entry(i))));
    expect(writer.written, 'the batch with the refused entry is not written').to.equal(0);
    for (let turn = 0; turn < 5; turn++) {
      await Promise.all([0, 1].map((j) => writer.write(entry(40 + turn * 2 + j))));
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => writer.queued === 0);

    expect(writer.queued).to.equal(0);
    expect(writer.dropped).to.equal(3);
    expect(writer.written).to.equal(47);
    const rows = (store.db.prepare('SELECT entry FROM logs ORDER BY seq').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as LogEntry).id);
    // every other row, once: the order holds but where the writer, to see that the store takes rows,
    // wrote the entries after a refused one before giving that one up (e15-e19 before e14 was dropped)
    expect([...rows].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))).to.deep.equal(Array.from({ length: 50 }, (_, i) => `e${i}`).filter((id) => !refusedIds.includes(id)));
    const buckets = await store.spendBuckets();
    expect(buckets.map((b) => b.requests)).to.deep.equal([47]);
    const refused = lines.filter((l) => l.msg === 'request log entry refused by the store while it takes others; dropped');
    expect(refused.map((l) => [l.level, l.requestId, l.org])).to.deep.equal(refusedIds.map((id) => ['error', id, 'acme']));

    // new entries go straight through
    await writer.write(entry(60));
    expect(writer.written).to.equal(48);
    await store.close();
  });

  it('drops nothing while the store refuses every write: a store that is down is waited for, however many retries it takes', async () => {
    const store = new SqliteBackend(':memory:');
    const logger = createLogger({ level: 'silent' });
    const writer = new LogWriter(store, logger, { maxQueued: 1000, retryDelayMs: 1, maxRetryDelayMs: 2, batchSize: 500 });
    store.db.exec('ALTER TABLE logs RENAME TO logs_away');
    await Promise.all(Array.from({ length: 20 }, (_, i) => writer.write(entry(i))));
    for (let turn = 0; turn < 10; turn++) {
      await Promise.all([0, 1].map((j) => writer.write(entry(20 + turn * 2 + j))));
      await new Promise((r) => setTimeout(r, 10));
    }
    // many retries later (each refused): the head has long been split down to single entries
    await until(() => writer.failedWrites > 60);
    expect(writer.failedWrites).to.be.greaterThan(60);
    expect(writer.dropped).to.equal(0);
    expect(writer.queued).to.equal(40);

    store.db.exec('ALTER TABLE logs_away RENAME TO logs');
    await until(() => writer.queued === 0);
    const rows = (store.db.prepare('SELECT entry FROM logs ORDER BY seq').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as LogEntry).id);
    expect(rows).to.deep.equal(Array.from({ length: 40 }, (_, i) => `e${i}`));
    await store.close();
  });
});
