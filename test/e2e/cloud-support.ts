/** Helpers for the cloud provider end-to-end tests. */
import http from 'node:http';

/** A streamed chat completion read raw, for the cost trailer the SDKs do not expose. */
export async function streamTrailers(base: string, path: string, body: object, key: string): Promise<{ status: number; text: string; trailers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers as Record<string, string> }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** What a rejected SDK call carried, whichever SDK threw it. */
export async function rejection(promise: Promise<unknown>): Promise<{ status: number; error: any; headers: Headers }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { status?: number; error?: unknown; headers?: Headers };
    if (typeof e.status !== 'number') throw err;
    return { status: e.status, error: e.error, headers: e.headers as Headers };
  }
  throw new Error('expected the call to fail');
}
