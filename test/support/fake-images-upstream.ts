import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

export interface ReceivedFile {
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
}

export interface ImagesRequestRecord {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** the JSON body of a generation */
  json?: any;
  /** the text fields of a multipart edit, in order (repeated names repeat) */
  fields: [string, string][];
  files: ReceivedFile[];
  /** every part name in the order received */
  order: string[];
}

/** A JSON answer, or (with `events`) an SSE stream of `event: <type>` frames, as streamed generations send. */
export type ImagesAnswer = { status: number; body?: unknown; events?: { type: string; [k: string]: unknown }[] };

/** A one-pixel PNG, what the fake answers with in `b64_json`. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');

/**
 * A real node:http server that speaks the OpenAI images API: JSON generations and multipart edits
 * (parsed with busboy, as any server would). It records the fields and the size and digest of each file
 * it receives, and answers with one image per `n`: a URL, or base64 when asked (or when `alwaysB64`,
 * like gpt-image models).
 */
export class FakeImagesUpstream {
  readonly requests: ImagesRequestRecord[] = [];
  alwaysB64 = false;
  /** replace the default answer (a promise holds it back until it resolves) */
  answer?: (rec: ImagesRequestRecord) => ImagesAnswer | Promise<ImagesAnswer>;
  url = '';
  private server?: http.Server;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get last(): ImagesRequestRecord {
    return this.requests[this.requests.length - 1];
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rec: ImagesRequestRecord = { path: req.url ?? '', headers: req.headers, fields: [], files: [], order: [] };
    try {
      if (String(req.headers['content-type']).startsWith('multipart/form-data')) await readMultipart(req, rec);
      else rec.json = JSON.parse(await readText(req));
    } catch (err) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream could not read the body: ${(err as Error).message}`, type: 'invalid_request_error', code: null, param: null } }));
      return;
    }
    this.requests.push(rec);
    const { status, body, events } = this.answer ? await this.answer(rec) : this.defaultAnswer(rec);
    if (events) {
      res.writeHead(status, { 'content-type': 'text/event-stream' });
      for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private defaultAnswer(rec: ImagesRequestRecord): ImagesAnswer {
    const field = (name: string) => rec.json?.[name] ?? rec.fields.find(([k]) => k === name)?.[1];
    const n = Number(field('n') ?? 1);
    const b64 = this.alwaysB64 || field('response_format') === 'b64_json';
    const data = Array.from({ length: n }, (_, i) => (b64 ? { b64_json: TINY_PNG.toString('base64') } : { url: `https://images.example.test/img-${i}.png` }));
    return { status: 200, body: { created: 1700000000, data } };
  }
}

function readText(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function readMultipart(req: http.IncomingMessage, rec: ImagesRequestRecord): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: req.headers });
    parser.on('field', (name, value) => {
      rec.fields.push([name, value]);
      rec.order.push(name);
    });
    parser.on('file', (field, stream, info) => {
      rec.order.push(field);
      const hash = createHash('sha256');
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        hash.update(c);
      });
      stream.on('end', () => rec.files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, size, sha256: hash.digest('hex') }));
    });
    parser.on('close', resolve);
    parser.on('error', reject);
    req.pipe(parser);
  });
}
