import http from 'node:http';
import { median } from './median';

/**
 * Median time from sending a streaming request to its first body byte, in ms, over `count` sequential
 * requests on one keep-alive connection (c=1: the system under test's own latency, not queueing).
 */
export async function medianFirstByteMs(url: string, body: string, headers: Record<string, string>, count: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      times.push(
        await new Promise<number>((resolve, reject) => {
          const start = process.hrtime.bigint();
          let first: bigint | undefined;
          const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
            res.on('data', () => (first ??= process.hrtime.bigint()));
            res.on('end', () => resolve(Number((first ?? process.hrtime.bigint()) - start) / 1e6));
          });
          req.on('error', reject);
          req.end(body);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return median(times);
}
