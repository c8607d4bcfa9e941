/**
 * A fake Anthropic API on 127.0.0.1:0 that speaks the real wire format: it checks `x-api-key` and
 * `anthropic-version` the way api.anthropic.com does (401 / 400 in the Anthropic error shape), records
 * every request, and answers each one from a script: a JSON Message, an SSE event sequence, or an error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** the body's text exactly as it arrived */
  rawBody: string;
}

export type FakeReply =
  | { json: unknown; status?: number; headers?: Record<string, string> }
  | { events: { event: string; data: unknown }[]; headers?: Record<string, string>; /** end the socket after the events without closing the stream properly */ cut?: boolean }
  | { error: { status: number; type: string; message: string }; headers?: Record<string, string> };

/** a promise holds the answer back until it resolves (a request kept in flight) */
type Script = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export class FakeAnthropicUpstream {
  readonly requests: RecordedRequest[] = [];
  private script: Script = () => ({ error: { status: 500, type: 'api_error', message: 'no reply scripted' } });
  private server = http.createServer((req, res) => this.handle(req, res));

  constructor(readonly apiKey = 'sk-ant-test-upstream-key') {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answer every following request with `script` (a reply, or a function of the request). */
  reply(script: FakeReply | Script): void {
    this.script = typeof script === 'function' ? script : () => script;
  }

  /** Answer the next requests with these replies in order (the last one repeats). */
  replies(...list: FakeReply[]): void {
    let i = 0;
    this.script = () => list[Math.min(i++, list.length - 1)];
  }

  get last(): RecordedRequest {
    return this.requests[this.requests.length - 1];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* recorded as text */
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, rawBody: text };
      this.requests.push(recorded);
      if (req.headers['x-api-key'] !== this.apiKey) return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      if (!req.headers['anthropic-version']) return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      const reply = await this.script(recorded);
      const headers = { 'request-id': 'req_fake_1', ...(reply.headers ?? {}) };
      if ('error' in reply) return sendError(res, reply.error.status, reply.error.type, reply.error.message, headers);
      if ('json' in reply) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(reply.json));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
      const wire = reply.events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');
      // a cut stream: the events reach the client, then the connection drops without a proper end
      if (reply.cut) res.write(wire, () => res.socket?.destroy());
      else res.end(wire);
    });
  }
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

/** A complete Messages event sequence for a text answer (what api.anthropic.com streams). */
export function textEvents(id: string, model: string, text: string[], usage = { input_tokens: 10, output_tokens: 5 }) {
  return [
    { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } } },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
    { event: 'ping', data: { type: 'ping' } },
    ...text.map((t) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } } })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}
