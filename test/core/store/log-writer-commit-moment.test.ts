import { expect } from 'chai';
import { createLogger } from '../../../core/observability/logger';
import { LogWriter } from '../../../core/store/log-writer';
import type { LogEntry } from '../../../core/store/log-entry';
import { SqliteBackend } from '../../../core/store/sqlite-backend';
import { ClientSignal } from '../../../core/pipeline/client-signal';
import { UpstreamClient } from '../../../core/upstream/upstream-client';
import { UpstreamWaits } from '../../../core/upstream/upstream-waits';
import { FakeOpenAI } from '../../support/fake-openai';

const DEFAULTS = { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, totalMs: 10_000 };
const POST = { path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' };
/** so long that in these tests only an upstream call or a read can be what wrote a row */
const NEVER_MS = 600_000;

function entry(i: number): LogEntry {
  return { id: `e${i}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), keyId: 'k', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 2, cost: 0.25, status: 200, latencyMs: 1 };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/**
 * When the request log commits (issue 16): not right after a response, where it would delay a client's
 * next request, but while the gateway waits for its next upstream call, or after commitDelayMs when no call
 * comes. An in-memory SQLite store (no journal: a write is its commit); rows are counted in its table, not
 * through the writer.
 */
describe('log writer: the commit waits for the next upstream call (in-memory SQLite)', () => {
  let store: SqliteBackend;
  const logger = createLogger({ level: 'error', write: () => {} });
  const rows = () => (store.db.prepare('SELECT count(*) AS n FROM logs').get() as { n: number }).n;

  beforeEach(() => {
    store = new SqliteBackend(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it('keeps a row waiting across turns, and commits it on the turn after a request goes upstream, while that upstream still works', async () => {
    const upstream = await new FakeOpenAI().start();
    const client = new UpstreamClient(DEFAULTS);
    try {
      const writer = new LogWriter(store, logger, { upstreamWaits: client.waits, commitDelayMs: NEVER_MS });
      const written = writer.write(entry(1));
      void writer.write(entry(2));
      await turns(5);
      expect(rows(), 'no upstream call yet: nothing committed').to.equal(0);

      upstream.script = { kind: 'hang' };
      const gone = new AbortController();
      const call = client.send(upstream.url, POST, ClientSignal.of(gone.signal)).catch((err: Error) => err);
      await written;
      expect(rows(), 'both rows, in the one commit made while the upstream works').to.equal(2);
      expect(writer.written).to.equal(2);
      gone.abort();
      await call;
    } finally {
      await client.close();
      await upstream.stop();
    }
  });

  it('with no upstream call, commits after commitDelayMs', async () => {
    const writer = new LogWriter(store, logger, { upstreamWaits: new UpstreamWaits(), commitDelayMs: 5 });
    await writer.write(entry(1));
    expect(rows()).to.equal(1);
    // and again for a later turn: the upstream callback registered by the first one is still pending
    await writer.write(entry(2));
    expect(rows()).to.equal(2);
  });

  it('a read through the log (settled) commits what waits at once', async () => {
    const writer = new LogWriter(store, logger, { upstreamWaits: new UpstreamWaits(), commitDelayMs: NEVER_MS });
    void writer.write(entry(1));
    void writer.write(entry(2));
    await writer.settled();
    expect(rows()).to.equal(2);
  });

  it('a later turn still commits with the next upstream call after an earlier one was written another way', async () => {
    const waits = new UpstreamWaits();
    const writer = new LogWriter(store, logger, { upstreamWaits: waits, commitDelayMs: NEVER_MS });
    void writer.write(entry(1));
    await writer.settled(); // written by the read: its upstream callback is left registered
    expect(rows()).to.equal(1);
    const written = writer.write(entry(2));
    await turns(3);
    expect(rows()).to.equal(1);
    waits.began();
    await written;
    expect(rows()).to.equal(2);
  });

  it('without upstreamWaits, commits on the next turn', async () => {
    const writer = new LogWriter(store, logger);
    void writer.write(entry(1));
    await turns(2);
    expect(rows()).to.equal(1);
  });
});
