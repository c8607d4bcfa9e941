import http from 'node:http';
import { PacedWriter } from './paced-writer';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  rawBody: string;
}

/** What the fake answers with; set per test. */
export type Script =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'sse'; /** objects as `data:` JSON frames; strings and bytes written as they are */ events: (string | Uint8Array | object)[]; headers?: Record<string, string>; /** end the socket after this many events, without [DONE] */ cutAfter?: number; delayMs?: number; eventDelayMs?: number; done?: boolean }
  | { kind: 'hang' }
  | { kind: 'destroy' }
  | { kind: 'raw'; status: number; body: string; headers?: Record<string, string> }
  /** `start`, then 1 MiB chunks of `fill` (one character) until the client closes the connection */
  | { kind: 'endless'; contentType: string; start: string; fill: string; status?: number };

/**
 * A real node:http server on 127.0.0.1:0 that speaks the OpenAI wire format (JSON and SSE), answers
 * from a per-test script, and records every request it receives (like Envoy AI Gateway's testupstream).
 */
export class FakeOpenAI {
  readonly requests: RecordedRequest[] = [];
  /** sockets closed by the client while we were still answering */
  clientClosed = 0;
  script: Script | ((req: RecordedRequest) => Script) = { kind: 'json', body: chatCompletion('Hello from upstream') };
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get last(): RecordedRequest {
    return this.requests[this.requests.length - 1];
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, rawBody };
      this.requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) this.clientClosed++;
      });
      const script = typeof this.script === 'function' ? this.script(recorded) : this.script;
      await this.answer(script, res);
    });
  }

  private async answer(script: Script, res: http.ServerResponse): Promise<void> {
    switch (script.kind) {
      case 'hang':
        return;
      case 'destroy':
        res.socket?.destroy();
        return;
      case 'raw':
        res.writeHead(script.status, { 'content-type': 'text/plain', ...script.headers });
        res.end(script.body);
        return;
      case 'endless': {
        res.writeHead(script.status ?? 200, { 'content-type': script.contentType });
        res.write(script.start);
        const chunk = Buffer.alloc(1024 * 1024, script.fill);
        new PacedWriter().pump(res, () => chunk);
        return;
      }
      case 'json':
        if (script.delayMs) await sleep(script.delayMs);
        res.writeHead(script.status ?? 200, { 'content-type': 'application/json', ...script.headers });
        res.end(JSON.stringify(script.body));
        return;
      case 'sse': {
        if (script.delayMs) await sleep(script.delayMs);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...script.headers });
        for (const [i, event] of script.events.entries()) {
          if (script.cutAfter !== undefined && i >= script.cutAfter) {
            await sleep(30); // let what was written reach the client before the cut
            res.socket?.destroy();
            return;
          }
          if (res.destroyed) return;
          res.write(typeof event === 'string' || event instanceof Uint8Array ? event : `data: ${JSON.stringify(event)}\n\n`);
          if (script.eventDelayMs) await sleep(script.eventDelayMs);
        }
        if (script.cutAfter !== undefined) {
          await sleep(30);
          res.socket?.destroy();
          return;
        }
        if (script.done !== false) res.write('data: [DONE]\n\n');
        res.end();
        return;
      }
    }
  }
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

export function chatCompletion(content: string, usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1700000000,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage,
    ...extra,
  };
}

/** The chunks an OpenAI stream of `pieces` sends, with a usage chunk when `usage` is given. */
export function chatChunks(pieces: string[], usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number }) {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
  const events: object[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  for (const p of pieces) events.push({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] });
  events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  if (usage) events.push({ ...base, choices: [], usage });
  return events;
}
