import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { Pool } from 'undici';
import { readBody } from './read-body';

/**
 * The benchmark's third baseline: the record keeping issue 16 asks of the gateway, done in one function
 * with nothing else: the key found by its SHA-256 in a map, the request parsed, its model checked and
 * re-serialised, a JSON answer parsed for its usage (a stream passed on as bytes, only its usage frame
 * parsed), the usage priced, a request-log row in SQLite (WAL, the rows a turn settled committed on the
 * next turn; the gateway commits with its next upstream call or 1 ms later, and either way a SIGKILL
 * loses only the rows of that moment) and an access line through pino (batched and written off the loop,
 * as the gateway does). No pipeline, stages, plugins, guards, metrics or error shapes. What the gateway
 * costs above this is its design; what this costs above the parse-only proxy is keeping the records the
 * gateway's way (a row committed a turn at a time, a pino line).
 *
 * Run as a child process: essential-proxy.js UPSTREAM_URL DIR KEY MODEL (DIR gets the database and the
 * access log, so that writing it costs the load generator nothing).
 */
const [upstream, dir, key, model] = process.argv.slice(2);
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 30_000 });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const keys = new Map([[sha256(key), { id: 'key_bench', org: 'bench' }]]);
const PRICE = { inputPerMTok: 1, outputPerMTok: 2 };

// as core/observability/logger.ts writes lines: 12 KB at a time, as bytes (sonic-boom's buffer mode takes
// only Buffers)
const lines = pino.destination({ dest: path.join(dir, 'access.log'), sync: false, minLength: 12 * 1024, periodicFlush: 250, contentMode: 'buffer' });
const log = pino(
  { base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
  { write: (line: string) => (lines.write as unknown as (bytes: Buffer) => boolean).call(lines, Buffer.from(line)) },
);

interface Row {
  id: string;
  time: string;
  keyId: string;
  org: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  status: number;
  latencyMs: number;
}

const db = new Database(path.join(dir, 'essential.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE logs (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, key_id TEXT, org TEXT, model TEXT, entry TEXT NOT NULL); CREATE INDEX logs_time ON logs (time)');
const insert = db.prepare('INSERT INTO logs (time, key_id, org, model, entry) VALUES (?, ?, ?, ?, ?)');
const commit = db.transaction((rows: Row[]) => {
  for (const r of rows) insert.run(r.time, r.keyId, r.org, r.model, JSON.stringify(r));
});
let settled: Row[] = [];
function record(row: Row): void {
  if (settled.push(row) === 1) {
    setImmediate(() => {
      const rows = settled;
      settled = [];
      commit(rows);
    });
  }
}

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** The usage frame of a finished stream, found in its last reads (it comes just before [DONE]). */
function streamUsage(tail: Buffer[]): Usage | undefined {
  const text = Buffer.concat(tail).toString('utf8');
  const at = text.lastIndexOf('"usage"');
  if (at < 0) return undefined;
  const start = text.lastIndexOf('data: ', at) + 'data: '.length;
  const end = text.indexOf('\n\n', at);
  return (JSON.parse(text.slice(start, end < 0 ? undefined : end)) as { usage?: Usage }).usage;
}

const server = http.createServer(async (req, res) => {
  const started = performance.now();
  try {
    const caller = keys.get(sha256((req.headers.authorization ?? '').replace(/^Bearer /, '')));
    if (!caller) {
      res.writeHead(401).end();
      return;
    }
    const request = JSON.parse(await readBody(req)) as { model?: string; stream?: boolean };
    if (request.model !== model) {
      res.writeHead(404).end();
      return;
    }
    const answer = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer upstream-key' },
      body: JSON.stringify(request),
    });
    const requestId = randomUUID();
    let usage: Usage | undefined;
    if (request.stream) {
      res.writeHead(answer.statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': requestId });
      const tail: Buffer[] = [];
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        res.write(chunk);
        if (tail.push(chunk) > 3) tail.shift();
      }
      res.end();
      usage = streamUsage(tail);
    } else {
      const text = await answer.body.text();
      usage = (JSON.parse(text) as { usage?: Usage }).usage;
      res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': requestId });
      res.end(text);
    }
    const promptTokens = usage?.prompt_tokens ?? 0;
    const completionTokens = usage?.completion_tokens ?? 0;
    const row: Row = {
      id: requestId,
      time: new Date().toISOString(),
      keyId: caller.id,
      org: caller.org,
      model,
      promptTokens,
      completionTokens,
      cost: (promptTokens * PRICE.inputPerMTok + completionTokens * PRICE.outputPerMTok) / 1e6,
      status: answer.statusCode,
      latencyMs: Math.round(performance.now() - started),
    };
    record(row);
    log.info({ requestId, keyId: row.keyId, org: row.org, model, status: row.status, inputTokens: promptTokens, outputTokens: completionTokens, cost: row.cost, latencyMs: row.latencyMs }, 'request');
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
