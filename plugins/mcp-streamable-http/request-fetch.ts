/**
 * A `fetch` for the SDK transport built on `undici.request`, answering with a light Response (the fields
 * the SDK transport reads: status, ok, statusText, headers.get, text, json, body): two to three times the
 * throughput of WHATWG fetch for the small JSON-RPC exchanges MCP makes (measured with the benchmark's MCP
 * upstream). Event streams are passed through as web streams; other bodies are read whole (they are single
 * JSON-RPC messages). Redirects are not followed, as with `redirect: 'manual'`: the SDK decides about
 * those itself.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { setMaxListeners } from 'node:events';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { MAX_ANSWER_BYTES } from '../../core/plugins/sdk';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
const EMPTY = Buffer.alloc(0);

export interface RequestFetchOptions {
  connectTimeoutMs?: number;
  /**
   * Checked with the addresses a host name resolves to as the socket connects (not before), so a name
   * re-pointed at an internal address after a check cannot be reached. Returns an error message to refuse.
   */
  refuseAddress?: (address: string) => string | undefined;
}

export type RequestFetch = typeof fetch & { close(): Promise<void> };

export function createRequestFetch(options: RequestFetchOptions = {}): RequestFetch {
  // MCP upstreams get a pool of their own: a standalone SSE stream (GET) may stay open for a long time.
  const refuse = options.refuseAddress;
  const connect = refuse
    ? { timeout: options.connectTimeoutMs ?? 10_000, lookup: guardedLookup(refuse) }
    : { timeout: options.connectTimeoutMs ?? 10_000 };
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 128, connect: connect as never, bodyTimeout: 0 });
  const widened = new WeakSet<AbortSignal>();

  const requestFetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (refuse) {
      // an address written in the URL is never looked up: check it here
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      const why = isIP(host) ? refuse(host) : undefined;
      if (why) throw Object.assign(new Error(why), { code: 'EGRESS_REFUSED' });
    }
    // header names are configured by tenants' admins: no prototype, so any name stays a header
    const headers: Record<string, string> = Object.create(null);
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const signal = init.signal ?? undefined;
    if (signal && !widened.has(signal)) {
      // The SDK shares one signal between all requests of a connection; each request listens to it.
      setMaxListeners(0, signal);
      widened.add(signal);
    }
    const res = await request(url, {
      method: (init.method ?? 'GET') as 'GET',
      headers,
      body: init.body as string | undefined,
      signal,
      dispatcher,
    });
    if ((String(res.headers['content-type'] ?? '')).toLowerCase().startsWith('text/event-stream')) {
      return new LiteResponse(url, res.statusCode, res.headers, null, Readable.toWeb(res.body) as ReadableStream) as unknown as Response;
    }
    const bytes = NULL_BODY_STATUSES.has(res.statusCode) ? (await res.body.dump(), EMPTY) : await readAtMost(res.body, MAX_ANSWER_BYTES);
    return new LiteResponse(url, res.statusCode, res.headers, bytes, null) as unknown as Response;
  }) as RequestFetch;
  requestFetch.close = () => dispatcher.close();
  return requestFetch;
}


/**
 * A body read whole, refused (its connection closed) once it passes `max` bytes: the server is an
 * organisation's own, and one that never stops sending would otherwise be held until the process fails.
 */
async function readAtMost(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > max) {
      const err = Object.assign(new Error(`its answer is larger than ${max / 1024 / 1024} MiB.`), { code: 'ANSWER_TOO_LARGE' });
      body.destroy(err);
      throw err;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves as usual, then refuses when any address is not allowed. */
function guardedLookup(refuse: (address: string) => string | undefined) {
  return (hostname: string, options: object, callback: LookupCallback) => {
    dnsLookup(hostname, options as never, (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      for (const a of addresses) {
        const why = refuse(a);
        if (why) return callback(Object.assign(new Error(why), { code: 'EGRESS_REFUSED' }));
      }
      callback(null, address, family);
    });
  };
}

type RawHeaders = Record<string, string | string[] | undefined>;

/** `Headers`, read-only, over undici's lower-cased header object. */
class LiteHeaders {
  constructor(private readonly raw: RawHeaders) {}
  get(name: string): string | null {
    const value = Object.hasOwn(this.raw, name.toLowerCase()) ? this.raw[name.toLowerCase()] : undefined;
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : String(value);
  }
  has(name: string): boolean {
    return this.get(name) !== null;
  }
  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of Object.entries(this.raw)) if (value !== undefined) callback(Array.isArray(value) ? value.join(', ') : String(value), name);
  }
}

/** The part of `Response` the SDK's streamable-HTTP transport uses, without WHATWG body machinery. */
class LiteResponse {
  readonly ok: boolean;
  readonly statusText = '';
  readonly type = 'basic';
  readonly redirected = false;
  readonly headers: LiteHeaders;
  constructor(
    readonly url: string,
    readonly status: number,
    raw: RawHeaders,
    private readonly bytes: Buffer | null,
    /** a web stream for event streams; null when the body was read whole */
    readonly body: ReadableStream | null,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = new LiteHeaders(raw);
  }
  async text(): Promise<string> {
    if (this.bytes) return this.bytes.toString('utf8');
    return this.body ? new Response(this.body).text() : '';
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.bytes ?? Buffer.from(await this.text());
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
}
