import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LogEntry } from '../../../core/store/log-entry';
import { SqliteBackend } from '../../../core/store/sqlite-backend';
import { REPO_ROOT } from '../../support/fixtures';

const BACKEND = path.join(REPO_ROOT, 'dist', 'core', 'store', 'sqlite-backend.js');

function entry(id: string, cost = 0.5): LogEntry {
  return { id, time: '2026-11-27T10:00:00.000Z', keyId: 'k', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'p/m', promptTokens: 3, completionTokens: 4, cost, status: 200, latencyMs: 1 };
}

/**
 * Another process on the file: takes `batches` of rows (each batch's ids; 'read' between two batches
 * reads the spend, which commits what it has taken), then kills itself with SIGKILL, no close.
 */
function killedAfter(file: string, batches: (string[] | 'read')[]): void {
  const script = `
    const { SqliteBackend } = require(${JSON.stringify(BACKEND)});
    const store = new SqliteBackend(${JSON.stringify(file)});
    const entry = (id) => (${entry.toString()})(id);
    (async () => {
      for (const batch of ${JSON.stringify(batches)}) {
        if (batch === 'read') await store.spendBuckets();
        else await store.appendLogs(batch.map(entry));
      }
      process.kill(process.pid, 'SIGKILL');
    })();`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(child.signal, child.stderr).to.equal('SIGKILL');
}

const ids = (store: SqliteBackend) => (store.db.prepare('SELECT entry FROM logs ORDER BY seq').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as LogEntry).id);
const journals = (dir: string) => readdirSync(dir).filter((name) => name.includes('-rows-'));

/**
 * The SQLite store's row journal (core/store/log-journal.ts, issue 16): the rows a store has taken are
 * in a file of its process's own at once, and in the table within a commit interval. A process killed
 * before its commit leaves them there, and the next store opened on the database commits each of them,
 * once, with its spend.
 */
describe('sqlite store: the journal of log rows not yet committed', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-journal-'));
    file = path.join(dir, 'gw.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('holds taken rows in an owner-only file until they are committed, and removes it on close', async () => {
    const store = new SqliteBackend(file);
    await store.appendLogs([entry('a'), entry('b')]);
    const [name] = journals(dir);
    const lines = readFileSync(path.join(dir, name), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as LogEntry).id)).to.deep.equal(['a', 'b']);
    expect(statSync(path.join(dir, name)).mode & 0o777).to.equal(0o600);
    expect(ids(store), 'not committed yet').to.deep.equal([]);
    expect((await store.queryLogs({ limit: 10 })).data.map((e) => e.id), 'a read commits first').to.deep.equal(['b', 'a']);
    await store.appendLogs([entry('c')]);
    await store.close();
    expect(journals(dir)).to.deep.equal([]);
    const again = new SqliteBackend(file);
    expect(ids(again)).to.deep.equal(['a', 'b', 'c']);
    await again.close();
  });

  it('commits on its own within the commit interval', async () => {
    const store = new SqliteBackend(file);
    await store.appendLogs([entry('a')]);
    for (let i = 0; i < 200 && ids(store).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(ids(store)).to.deep.equal(['a']);
    await store.close();
  });

  it('commits, once each, the rows of a process killed before its commit, with their spend', async () => {
    killedAfter(file, [['a', 'b'], ['c']]);
    expect(journals(dir)).to.have.length(1);
    const store = new SqliteBackend(file);
    expect(ids(store)).to.deep.equal(['a', 'b', 'c']);
    const buckets = await store.spendBuckets();
    expect(buckets.map((b) => [b.requests, b.cost, b.promptTokens])).to.deep.equal([[3, 1.5, 9]]);
    expect(journals(dir), 'replayed and removed').to.deep.equal([]);
    await store.close();
    const again = new SqliteBackend(file);
    expect(ids(again), 'a second open adds nothing').to.deep.equal(['a', 'b', 'c']);
    await again.close();
  });

  it('commits only what came after the last commit of the killed process', async () => {
    killedAfter(file, [['a', 'b'], 'read', ['c'], 'read']);
    killedAfter(file, [['d'], 'read', ['e']]);
    const store = new SqliteBackend(file);
    expect(ids(store).sort()).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect((await store.spendBuckets()).reduce((n, b) => n + b.requests, 0)).to.equal(5);
    await store.close();
  });

  it('skips a line torn by a power loss and commits the others', async () => {
    killedAfter(file, [['a'], ['b']]);
    const [name] = journals(dir);
    appendFileSync(path.join(dir, name), '{"id":"torn","time":"2026');
    const store = new SqliteBackend(file);
    expect(ids(store)).to.deep.equal(['a', 'b']);
    await store.close();
  });

  it('leaves alone the journal of a store still open on the file', async () => {
    const first = new SqliteBackend(file);
    await first.appendLogs([entry('a')]);
    const second = new SqliteBackend(file);
    expect(ids(second), 'not taken over').to.deep.equal([]);
    await second.close();
    await first.close();
    const third = new SqliteBackend(file);
    expect(ids(third), 'once').to.deep.equal(['a']);
    await third.close();
  });
});
