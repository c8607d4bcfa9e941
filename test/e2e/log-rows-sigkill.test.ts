import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { SqliteBackend } from '../../core/store/sqlite-backend';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { REPO_ROOT } from '../support/fixtures';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');
const KEY = 'sk-sigkill-member-1';
/** 10 prompt tokens at $100/M + 5 completion tokens at $200/M */
const COST_PER_REQUEST = 0.002;
const PARALLEL = 60;

/**
 * The log rows of a batch (every request settled in one event-loop turn goes to SQLite in one
 * transaction) against the harshest end: the gateway as users run it, on its default SQLite store,
 * killed with SIGKILL (no drain, no flush). Every request answered before the last turn keeps its row,
 * once, and the spend rollups equal the sum of the rows.
 */
describe('request log on SQLite when the gateway is SIGKILLed', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAI;
  let dir: string;
  let child: ChildProcess | undefined;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    dir = mkdtempSync(path.join(tmpdir(), 'mg-sigkill-'));
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`keeps one row per answered request of ${PARALLEL} parallel ones, and their spend, after a SIGKILL`, async () => {
    const file = path.join(dir, 'gateway.db');
    const config = {
      store: { url: `sqlite://${file}`, sweepIntervalSeconds: 0 },
      organizations: [{ id: 'acme' }],
      keys: [{ key: KEY, id: 'member', org: 'acme' }],
      providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-upstream' }],
      models: [{ name: 'priced', provider: 'oai', model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } }],
    };
    writeFileSync(path.join(dir, 'gateway.json'), JSON.stringify(config));
    const gw = spawn(process.execPath, [MAIN, '--config', path.join(dir, 'gateway.json'), '--port', '0'], { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] });
    child = gw;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => gw.once('exit', (_code, signal) => resolve(signal)));
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: gw.stdout! }).on('line', (line) => {
        const m = /^model-gateway listening on (http:\/\/\S+)$/.exec(line);
        if (m) resolve(m[1]);
      });
      void exited.then((signal) => reject(new Error(`the gateway exited (${signal}) before listening`)));
    });

    const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
    const ask = async () => {
      const { response } = await client.chat.completions.create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }).withResponse();
      return response.headers.get('x-gateway-request-id')!;
    };
    // the fake upstream answers at once: many of these settle in the same turn and share a transaction
    const answered = await Promise.all(Array.from({ length: PARALLEL }, ask));
    expect(new Set(answered).size).to.equal(PARALLEL);
    // one more request answered after them: the turns that wrote theirs are over (this one may be in flight)
    const last = await ask();

    gw.kill('SIGKILL');
    expect(await exited).to.equal('SIGKILL');

    const store = new SqliteBackend(file);
    try {
      const ids = (store.db.prepare('SELECT entry FROM logs ORDER BY seq').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as { id: string }).id);
      expect(answered.filter((id) => !ids.includes(id)), 'answered before the kill, no row').to.deep.equal([]);
      expect(ids.length, 'no row written twice').to.equal(new Set(ids).size);
      expect(ids.filter((id) => id !== last).sort()).to.deep.equal([...answered].sort());
      // the rollups were written in the rows' transactions: they count exactly the rows there are
      const buckets = await store.spendBuckets();
      expect(buckets.reduce((a, b) => a + b.requests, 0)).to.equal(ids.length);
      expect(buckets.reduce((a, b) => a + b.cost, 0)).to.be.closeTo(ids.length * COST_PER_REQUEST, 1e-9);
      expect(buckets.reduce((a, b) => a + b.promptTokens, 0)).to.equal(ids.length * 10);
    } finally {
      await store.close();
    }
  });
});
