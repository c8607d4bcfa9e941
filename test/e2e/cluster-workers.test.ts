import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { SqliteBackend } from '../../core/store/sqlite-backend';
import { FakeOpenAI, chatChunks, chatCompletion } from '../support/fake-openai';
import { REPO_ROOT } from '../support/fixtures';

const MAIN = path.join(REPO_ROOT, 'dist', 'core', 'main.js');
const ADMIN = 'sk-cluster-admin-1';
const BUDGETED = 'sk-cluster-budgeted-1';
const LIMITED = 'sk-cluster-limited-1';
const MEMBER = 'sk-cluster-member-1';
/** 10 prompt tokens at $100/M + 5 completion tokens at $200/M */
const COST_PER_REQUEST = 0.002;

interface Cluster {
  child: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

/** `model-gateway --workers 2` as a user runs it: the CLI as a child process, SQLite in a temp dir. */
async function startCluster(configFile: string): Promise<Cluster> {
  const child = spawn(process.execPath, [MAIN, '--config', configFile, '--port', '0', '--workers', '2'], { env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  // kept for the tests, and still shown as before
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    process.stderr.write(`${line}\n`);
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const m = /^model-gateway listening on (http:\/\/\S+)$/.exec(line);
      if (m) resolve(m[1]);
    });
    exit.then((code) => reject(new Error(`the gateway exited ${code} before listening`)));
  });
  return { child, url, stdout, stderr, exit };
}

/** one request on a connection of its own (no keep-alive), so the primary hands it to the next worker in turn */
function chatOnNewConnection(url: string, key: string): Promise<{ status: number; worker: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, worker: String(res.headers['x-gateway-worker']) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }));
  });
}

/** the worker processes of a primary (Linux /proc) */
function workerPids(primary: number): number[] {
  return readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** a process that has exited (gone, or a zombie its new parent has not reaped yet) */
function exited(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('model-gateway --workers 2: two processes on one port and one store', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAI;
  let dir: string;
  let gw: Cluster;

  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(() => upstream.stop());
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mg-cluster-'));
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) };
    const config = {
      adminKey: ADMIN,
      store: { url: `sqlite://${path.join(dir, 'gateway.db')}`, sweepIntervalSeconds: 0 },
      organizations: [{ id: 'acme' }],
      keys: [
        { key: BUDGETED, id: 'budgeted', org: 'acme', maxBudget: 10 * COST_PER_REQUEST },
        { key: LIMITED, id: 'limited', org: 'acme', rpm: 10 },
        { key: MEMBER, id: 'member', org: 'acme' },
      ],
      providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-upstream' }],
      models: [{ name: 'priced', provider: 'oai', model: 'm', price: { inputPerMTok: 100, outputPerMTok: 200 } }],
      server: { drainSeconds: 10 },
    };
    const file = path.join(dir, 'gateway.json');
    writeFileSync(file, JSON.stringify(config));
    gw = await startCluster(file);
  });
  afterEach(async () => {
    if (gw?.child.exitCode === null) {
      gw.child.kill('SIGTERM');
      await gw.exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = (key: string, body: object = {}) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, ...body }),
    });

  /** 50 requests at once through the official client; the status of each and the workers that answered */
  async function fifty(key: string): Promise<{ passed: number; refused: string[]; workers: Set<string> }> {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const workers = new Set<string>();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.chat.completions
          .create({ model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })
          .withResponse()
          .then(
            ({ response }) => {
              workers.add(response.headers.get('x-gateway-worker') ?? '?');
              return 200;
            },
            (err: InstanceType<typeof OpenAI.APIError>) => {
              workers.add(err.headers?.get('x-gateway-worker') ?? '?');
              return `${err.status} ${err.code}`;
            },
          ),
      ),
    );
    return { passed: results.filter((r) => r === 200).length, refused: results.filter((r): r is string => r !== 200), workers };
  }

  it('prints the startup line once, and 50 parallel requests over both workers pass a budget that fits 10 at most 11 times', async () => {
    expect(gw.stdout.filter((l) => l.startsWith('model-gateway listening on'))).to.have.length(1);
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 200 };
    const { passed, refused, workers } = await fifty(BUDGETED);
    expect([...workers].sort(), 'both workers answered').to.deep.equal(['1', '2']);
    expect(passed).to.be.within(1, 11);
    expect(refused.every((r) => r === '429 budget_exceeded'), refused.join(', ')).to.equal(true);
  });

  it('50 parallel requests over both workers pass a limit of 10 a minute at most 10 times', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('ok', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }), delayMs: 50 };
    const { passed, refused, workers } = await fifty(LIMITED);
    expect([...workers].sort(), 'both workers answered').to.deep.equal(['1', '2']);
    expect(passed).to.be.within(1, 10);
    expect(refused.every((r) => r === '429 rate_limit_exceeded'), refused.join(', ')).to.equal(true);
  });

  it('answers /metrics with the counts of every worker, whichever worker the scrape reaches', async () => {
    const answered = await Promise.all(Array.from({ length: 6 }, () => chatOnNewConnection(gw.url, MEMBER)));
    expect(answered.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(new Set(answered.map((a) => a.worker)).size, 'both workers answered').to.equal(2);
    // a request is counted as its log entry is written, just after its answer
    for (let logged = 0; logged < 6; ) {
      const page = (await (await fetch(`${gw.url}/admin/v1/logs?key=member`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data: unknown[] };
      logged = page.data.length;
    }
    // each scrape on a connection of its own: the primary hands them to the workers in turn
    const scrapes: { worker: string; requests: number | undefined; tokens: number | undefined }[] = [];
    for (let i = 0; i < 4; i++) {
      const { worker, text } = await new Promise<{ worker: string; text: string }>((resolve, reject) => {
        http.get(`${gw.url}/metrics`, { agent: false, headers: { authorization: `Bearer ${ADMIN}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ worker: String(res.headers['x-gateway-worker']), text: body }));
        }).on('error', reject);
      });
      const value = (pattern: RegExp) => {
        const m = pattern.exec(text);
        return m ? Number(m[1]) : undefined;
      };
      scrapes.push({
        worker,
        requests: value(/^gateway_requests_total\{endpoint="chat",model="priced",status="200"\} (\S+)$/m),
        tokens: value(/^gateway_tokens_total\{model="priced",type="input"\} (\S+)$/m),
      });
    }
    expect(new Set(scrapes.map((s) => s.worker)).size, 'both workers were scraped').to.equal(2);
    // a counter that read each worker's own count went down and up between scrapes: Prometheus took it for restarts
    for (const s of scrapes) expect(s, `scrape on worker ${s.worker}`).to.deep.include({ requests: 6, tokens: 60 });
  });

  it('refuses a key revoked through one worker on every worker within a second, though both had it cached', async () => {
    const created = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ org: 'acme', name: 'leaving' }) });
    expect(created.status).to.equal(201);
    const { id, key } = (await created.json()) as { id: string; key: string };
    // both workers serve the key, so both hold it in their key cache (5 s)
    const warmed = new Set<string>();
    for (let i = 0; i < 40 && warmed.size < 2; i++) {
      const res = await chat(key);
      expect(res.status).to.equal(200);
      warmed.add(res.headers.get('x-gateway-worker')!);
    }
    expect(warmed.size, 'both workers served the key').to.equal(2);

    expect((await fetch(`${gw.url}/admin/v1/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } })).status).to.equal(200);
    const start = Date.now();
    const refusedBy = new Set<string>();
    let lastServedAt = start;
    while (refusedBy.size < 2 && Date.now() - start < 6000) {
      // four at once, so both workers answer in every round whatever the order of connections
      const round = await Promise.all(Array.from({ length: 4 }, () => chat(key)));
      for (const res of round) {
        await res.arrayBuffer();
        if (res.status === 401) refusedBy.add(res.headers.get('x-gateway-worker')!);
        else lastServedAt = Date.now();
      }
    }
    expect([...refusedBy].sort(), 'workers that refused the revoked key').to.deep.equal(['1', '2']);
    expect(lastServedAt - start, 'ms during which a worker still served the revoked key').to.be.below(1000);
  });

  it('replaces a worker killed with SIGKILL, and requests keep succeeding', async () => {
    const before = workerPids(gw.child.pid!);
    expect(before).to.have.length(2);
    process.kill(before[0], 'SIGKILL');
    for (let i = 0; i < 200; i++) {
      const now = workerPids(gw.child.pid!);
      if (now.length === 2 && !now.includes(before[0])) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = workerPids(gw.child.pid!);
    expect(after).to.have.length(2);
    expect(after).to.not.include(before[0]);
    // the replacement (worker 3) listens once it answers; until then the survivor serves everything
    const served = new Set<string>();
    const since = Date.now();
    while (!served.has('3') && Date.now() - since < 15_000) {
      const { status, worker } = await chatOnNewConnection(gw.url, MEMBER);
      expect(status).to.equal(200);
      served.add(worker);
    }
    expect(served.has('3'), `workers that served: ${[...served].join(', ')}`).to.equal(true);
  });

  it('replaces workers that keep dying young later each time (0.1 s, 0.2 s, 0.4 s), not in a tight loop', async () => {
    const announced = () => gw.stderr.map((line) => /exited \(SIGKILL\) after [\d.]+ s; starting another (now|in ([\d.]+) s)$/.exec(line)).filter((m) => m !== null).map((m) => m![2] ?? '0');
    let pids = workerPids(gw.child.pid!);
    // the other worker lives on, so the port stays open (with --port 0 a new set of workers would pick another)
    const survivor = pids[1];
    for (let death = 1; death <= 3; death++) {
      // each victim was started seconds ago at most: it died young
      const victim = pids.find((pid) => pid !== survivor)!;
      process.kill(victim, 'SIGKILL');
      for (let i = 0; i < 200; i++) {
        pids = workerPids(gw.child.pid!);
        if (pids.length === 2 && !pids.includes(victim) && announced().length === death) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(pids, `a replacement for death ${death}`).to.have.length(2);
    }
    expect(announced()).to.deep.equal(['0.1', '0.2', '0.4']);
    expect(workerPids(gw.child.pid!)).to.include(survivor);
    const { status } = await chatOnNewConnection(gw.url, MEMBER);
    expect(status).to.equal(200);
  });

  it('stops with exit 1, saying why, when replacements keep failing to start, instead of replacing them for ever', async () => {
    // the config no longer reads: every replacement fails at its start, as it would on a store that stays down
    writeFileSync(path.join(dir, 'gateway.json'), '{ not json');
    process.kill(workerPids(gw.child.pid!)[0], 'SIGKILL');
    const code = await Promise.race([gw.exit, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 45 s'), 45_000))]);
    const stderr = gw.stderr.join('\n');
    expect(code, stderr).to.equal(1);
    expect(stderr).to.match(/config error/);
    expect(stderr).to.match(/5 workers in a row exited before listening \(the last: code 1; its error is above\); stopping the gateway/);
  });

  it('when the primary is SIGKILLed, every worker finishes its open streams, writes their log rows, then exits', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(Array.from({ length: 20 }, (_, i) => `w${i} `)), eventDelayMs: 100 };
    const workers = workerPids(gw.child.pid!);
    expect(workers).to.have.length(2);
    try {
      const streams: { worker: string; id: string; reader: ReadableStreamDefaultReader<Uint8Array> }[] = [];
      for (let i = 0; i < 12 && new Set(streams.map((s) => s.worker)).size < 2; i++) {
        const res = await chat(MEMBER, { stream: true });
        expect(res.status).to.equal(200);
        const reader = res.body!.getReader();
        await reader.read();
        streams.push({ worker: res.headers.get('x-gateway-worker')!, id: res.headers.get('x-gateway-request-id')!, reader });
      }
      expect(new Set(streams.map((s) => s.worker)).size, 'streams open on both workers').to.equal(2);

      // no SIGTERM reaches the workers: they only lose their IPC channel to the primary
      gw.child.kill('SIGKILL');
      const texts = await Promise.all(
        streams.map(async ({ reader }) => {
          let text = '';
          try {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) return text;
              text += new TextDecoder().decode(value);
            }
          } catch (err) {
            return `${text}[cut: ${(err as Error).message}]`;
          }
        }),
      );
      for (const text of texts) expect(text).to.match(/w19 [\s\S]*data: \[DONE\]\n\n$/);
      for (let i = 0; i < 300 && !workers.every(exited); i++) await new Promise((r) => setTimeout(r, 50));
      expect(workers.filter((pid) => !exited(pid)), 'workers still running without their primary').to.deep.equal([]);

      const store = new SqliteBackend(path.join(dir, 'gateway.db'));
      try {
        const ids = (store.db.prepare('SELECT entry FROM logs').all() as { entry: string }[]).map((r) => (JSON.parse(r.entry) as { id: string }).id);
        expect(streams.map((s) => s.id).filter((id) => !ids.includes(id)), 'streams without a log row').to.deep.equal([]);
      } finally {
        await store.close();
      }
    } finally {
      for (const pid of workers) if (!exited(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('on SIGTERM every worker finishes its open streams, then the gateway exits 0', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(Array.from({ length: 20 }, (_, i) => `w${i} `)), eventDelayMs: 100 };
    const streams: { worker: string; reader: ReadableStreamDefaultReader<Uint8Array> }[] = [];
    // one connection per stream: open streams until both workers hold at least one
    for (let i = 0; i < 12 && new Set(streams.map((s) => s.worker)).size < 2; i++) {
      const res = await chat(MEMBER, { stream: true });
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      await reader.read();
      streams.push({ worker: res.headers.get('x-gateway-worker')!, reader });
    }
    expect(new Set(streams.map((s) => s.worker)).size, 'streams open on both workers').to.equal(2);

    gw.child.kill('SIGTERM');
    const texts = await Promise.all(
      streams.map(async ({ reader }) => {
        let text = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return text;
          text += new TextDecoder().decode(value);
        }
      }),
    );
    for (const text of texts) {
      expect(text).to.include('w19 ');
      expect(text).to.include('data: [DONE]');
    }
    expect(await gw.exit).to.equal(0);
  });
});
