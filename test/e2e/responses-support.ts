/** Helpers shared by the Responses end-to-end tests. */

/** POST a streaming request over node:http: the parsed events and the HTTP trailers. */
export async function rawSse(base: string, key: string, body: object, headers: Record<string, string> = {}): Promise<{ status: number; events: any[]; trailers: Record<string, string> }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const events = text
          .split('\n\n')
          .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
          .filter((l): l is string => !!l)
          .map((l) => JSON.parse(l.slice(6)));
        resolve({ status: res.statusCode ?? 0, events, trailers: res.trailers as Record<string, string> });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
