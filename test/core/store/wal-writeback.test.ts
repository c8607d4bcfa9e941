import { expect } from 'chai';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LogEntry } from '../../../core/store/log-entry';
import { SqliteBackend } from '../../../core/store/sqlite-backend';
import { WalWriteback } from '../../../core/store/wal-writeback';
import { eventually } from '../../support/eventually';

/** this process's open descriptors on `file`, read from /proc (Linux) */
function descriptorsOn(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed between the listing and the look
    }
  }
  return n;
}

function entry(i: number): LogEntry {
  return { id: `e${i}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), keyId: 'k', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 1, completionTokens: 2, cost: 0.25, status: 200, latencyMs: 1 };
}

/**
 * The SQLite store's background sync of its WAL (issue 16: the checkpoint inside a commit held the event
 * loop for 20 to 35 ms, most of it syncing the WAL). What is checked here is when a sync starts and that
 * its descriptor is let go; what it saves is measured by `compare-builds` (the p99), never by a test.
 */
describe('WAL writeback: background syncs of a SQLite WAL', () => {
  let dir: string;
  let wal: string;
  let clock: number;
  const now = () => clock;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-wal-writeback-'));
    wal = path.join(dir, 'gw.db-wal');
    clock = 1_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts one sync at a time, at most one an interval', async () => {
    writeFileSync(wal, 'frames');
    const writeback = new WalWriteback(wal, 20, now);
    writeback.nudge();
    expect(writeback.syncsStarted).to.equal(1);
    writeback.nudge();
    clock += 50;
    writeback.nudge();
    expect(writeback.syncsStarted, 'none while one runs').to.equal(1);
    await eventually(() => !writeback.syncing, 5000);
    clock += 5;
    writeback.nudge();
    expect(writeback.syncsStarted, 'an interval after the last start has passed').to.equal(2);
    await eventually(() => !writeback.syncing, 5000);
    writeback.nudge();
    expect(writeback.syncsStarted, 'the interval counts from the start').to.equal(2);
    clock += 20;
    writeback.nudge();
    expect(writeback.syncsStarted).to.equal(3);
    await eventually(() => !writeback.syncing, 5000);
    writeback.close();
  });

  it('waits for the WAL to exist, trying again an interval later, then syncs it', async () => {
    const writeback = new WalWriteback(wal, 20, now);
    writeback.nudge();
    expect(writeback.syncsStarted).to.equal(0);
    writeFileSync(wal, 'frames');
    writeback.nudge();
    expect(writeback.syncsStarted, 'not within the interval of the failed try').to.equal(0);
    clock += 20;
    writeback.nudge();
    expect(writeback.syncsStarted).to.equal(1);
    await eventually(() => !writeback.syncing, 5000);
    writeback.close();
    expect(descriptorsOn(wal)).to.equal(0);
  });

  it('lets the descriptor go on close, also when a sync is still running', async () => {
    writeFileSync(wal, 'frames');
    const writeback = new WalWriteback(wal, 20, now);
    writeback.nudge();
    expect(descriptorsOn(wal)).to.equal(1);
    writeback.close();
    await eventually(() => !writeback.syncing, 5000);
    expect(descriptorsOn(wal)).to.equal(0);
    clock += 100;
    writeback.nudge();
    expect(writeback.syncsStarted, 'closed: no more').to.equal(1);
    expect(descriptorsOn(wal)).to.equal(0);
  });

  it('a SQLite store holds the WAL open for it after a commit and lets it go on close', async () => {
    const store = new SqliteBackend(path.join(dir, 'gw.db'));
    expect(descriptorsOn(wal), "before any commit: SQLite's own at most").to.be.at.most(1);
    await store.appendLogs([entry(1), entry(2)]);
    await store.spendBuckets(); // a read commits the journaled rows at once
    expect(descriptorsOn(wal), "SQLite's and the writeback's").to.equal(2);
    await store.close();
    await eventually(() => descriptorsOn(wal) === 0, 5000);
    expect(descriptorsOn(wal)).to.equal(0);
  });
});
