/** Helpers shared by the Messages end-to-end tests. */
import http from 'node:http';
import { parseSse } from '../../core/streaming/sse-parser';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  trailers: NodeJS.Dict<string>;
}

/**
 * POST with node:http, which (unlike fetch) exposes HTTP trailers: a stream's cost arrives as the
 * `x-gateway-response-cost` trailer.
 */
export function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The SSE events of a body, as `{ event, data }` with data parsed. */
export async function sseEvents(text: string): Promise<{ event?: string; data: any }[]> {
  async function* source() {
    yield text;
  }
  const out: { event?: string; data: any }[] = [];
  for await (const frame of parseSse(source())) out.push({ event: frame.event, data: frame.isDone ? frame.data : frame.json });
  return out;
}
