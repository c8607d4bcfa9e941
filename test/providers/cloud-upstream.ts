/**
 * The HTTP side shared by the fake cloud upstreams (Google, Bedrock): listen on 127.0.0.1:0, record every
 * request with its raw body, check auth with the fake's own rule, and answer from a script.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** path and query as sent */
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

export type Answer = (res: http.ServerResponse, request: RecordedRequest) => void | Promise<void>;

export class CloudUpstream {
  readonly requests: RecordedRequest[] = [];
  private script: (request: RecordedRequest) => Answer = () => (res) => {
    res.writeHead(500).end('no reply scripted');
  };
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  /** `refuse` returns an answer when the request's credentials are wrong, undefined when they are right */
  constructor(private readonly refuse: (request: RecordedRequest, port: number) => Answer | undefined) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get last(): RecordedRequest {
    return this.requests[this.requests.length - 1];
  }

  /** Answer every following request with what `script` picks for it. */
  reply(script: (request: RecordedRequest) => Answer): void {
    this.script = script;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = raw.toString('utf8');
      try {
        body = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        /* recorded as text */
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body };
      this.requests.push(recorded);
      void (this.refuse(recorded, this.port) ?? this.script(recorded))(res, recorded);
    });
  }
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Answer {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** SSE frames, `data:` lines of JSON (Gemini's alt=sse), or named events (Anthropic's). */
export function sse(frames: { event?: string; data: unknown }[]): Answer {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(frames.map((f) => `${f.event ? `event: ${f.event}\n` : ''}data: ${JSON.stringify(f.data)}\r\n\r\n`).join(''));
  };
}
