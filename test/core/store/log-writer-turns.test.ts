import { expect } from 'chai';
import { createLogger } from '../../../core/observability/logger';
import { LogWriter } from '../../../core/store/log-writer';
import type { LogEntry } from '../../../core/store/log-entry';
import { SqliteBackend } from '../../../core/store/sqlite-backend';

function entry(i: number): LogEntry {
  return { id: `e${i}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), keyId: 'k', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 2, cost: 0.25, status: 200, latencyMs: 1 };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

/**
 * When the request log writes (issue 16): the rows of one turn together, on the next turn, so a SIGKILL
 * loses only the last turn's rows. An in-memory SQLite store (no journal: a write is its commit); rows
 * are counted in its table, not through the writer.
 */
describe("log writer: a turn's rows are written together on the next turn (in-memory SQLite)", () => {
  let store: SqliteBackend;
  const logger = createLogger({ level: 'error', write: () => {} });
  const rows = () => (store.db.prepare('SELECT count(*) AS n FROM logs').get() as { n: number }).n;

  beforeEach(() => {
    store = new SqliteBackend(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it("writes the rows settled in one turn on the next, and a later turn's rows in a write of their own", async () => {
    const writer = new LogWriter(store, logger);
    const first = writer.write(entry(1));
    const same = writer.write(entry(2));
    expect(same, 'one write for the turn: its entries share its promise').to.equal(first);
    expect(rows(), 'nothing yet: the turn is not over').to.equal(0);
    await nextTurn();
    expect(rows()).to.equal(2);
    await first;
    const later = writer.write(entry(3));
    expect(later).to.not.equal(first);
    await later;
    expect(rows()).to.equal(3);
    expect(writer.written).to.equal(3);
  });

  it('a read through the log (settled) writes what waits at once', async () => {
    const writer = new LogWriter(store, logger);
    void writer.write(entry(1));
    void writer.write(entry(2));
    await writer.settled();
    expect(rows()).to.equal(2);
    // the turn's own write finds nothing left to write: no row twice
    await nextTurn();
    expect(rows()).to.equal(2);
    expect(writer.written).to.equal(2);
  });
});
