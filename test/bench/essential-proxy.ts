import { randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { Pool } from 'undici';
import { tokenUsageFromChat } from '../../core/apis/chat/chat-format';
import { hashKey } from '../../core/auth/key-hash';
import type { ModelPrice } from '../../core/config/types';
import { bearerToken } from '../../core/http/credentials';
import { AccessLines } from '../../core/observability/access-lines';
import { createLogger } from '../../core/observability/logger';
import { priceUsage } from '../../core/spend/pricing';
import type { LogEntry } from '../../core/store/log-entry';
import { LogWriter } from '../../core/store/log-writer';
import { SqliteBackend } from '../../core/store/sqlite-backend';
import type { Usage } from '../../core/types/chat';
import { emptyUsage } from '../../core/types/usage';
import { readBody } from './read-body';

/**
 * The benchmark's third baseline: the record keeping issue 16 asks of the gateway, done in one function
 * with the gateway's own parts and nothing else: the key found by its digest (core/auth/key-hash.ts) in a
 * map, the request parsed, its model checked and re-serialised, a JSON answer parsed for its usage (a
 * stream passed on as bytes, only its usage frame parsed), the usage priced (core/spend/pricing.ts), the
 * request-log row written by the log writer and the SQLite store (core/store/log-writer.ts,
 * sqlite-backend.ts: the rows a turn settled handed to the store on the next turn, into its journal at
 * once and committed with their spend rollups every 20 ms, as the gateway does: a SIGKILL loses only
 * the rows of that last turn) and the access line written by the gateway's logger
 * (core/observability/logger.ts) with the others of its moment (core/observability/access-lines.ts). No
 * pipeline, stages, plugins, guards, metrics, error shapes or store guards. What the gateway costs above
 * this is its design; what this costs above the parse-only proxy is keeping the records the gateway's
 * way.
 *
 * Run as a child process with its stdout going to a file (startLoggingProcess): essential-proxy.js
 * UPSTREAM_URL DIR KEY MODEL (DIR gets the database).
 */
const [upstream, dir, key, model] = process.argv.slice(2);
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 30_000 });
const keys = new Map([[hashKey(key), { id: 'key_bench', org: 'bench' }]]);
const PRICE: ModelPrice = { inputPerMTok: 1, outputPerMTok: 2 };
const log = createLogger();
const accessLines = new AccessLines(log);

// as in the gateway: the rows a turn settled go to the store on the next turn
const rows = new LogWriter(new SqliteBackend(path.join(dir, 'essential.db')), log);

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
    const caller = keys.get(hashKey(bearerToken(req.headers.authorization) ?? ''));
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
    const tokens = tokenUsageFromChat(usage) ?? emptyUsage();
    const row: LogEntry = {
      id: requestId,
      time: new Date().toISOString(),
      keyId: caller.id,
      org: caller.org,
      endpoint: 'chat',
      model,
      deploymentId: `up/${model}`,
      promptTokens: tokens.inputTokens,
      completionTokens: tokens.outputTokens,
      cost: priceUsage(PRICE, tokens),
      status: answer.statusCode,
      latencyMs: Math.round(performance.now() - started),
    };
    void rows.write(row);
    accessLines.add({ requestId, keyId: row.keyId, org: row.org, endpoint: row.endpoint, model, deployment: row.deploymentId, status: row.status, inputTokens: tokens.inputTokens, outputTokens: tokens.outputTokens, cost: row.cost, latencyMs: row.latencyMs, attempts: 1 });
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
// a plain line, as the gateway's own startup lines are (core/cli/startup-lines.ts)
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}\n`));
