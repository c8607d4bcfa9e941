/**
 * A hand-written 2026-07-28 upstream that does not follow the rule that a server asks a client only for
 * input it declared it can give: its one tool, `confirm`, and its one prompt, `release` (whose question
 * names its `owner` argument), always answer `input_required` with an elicitation. Plain JSON-RPC over node:http on 127.0.0.1 (no SDK: the SDK server would refuse to ask).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const complete = (result: Record<string, unknown>) => ({ resultType: 'complete', ...result });

export class PushyMcpServer {
  private constructor(
    private readonly http: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<PushyMcpServer> {
    const http = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (message.id === undefined) return void res.writeHead(202).end();
      let result: unknown;
      if (message.method === 'server/discover') {
        result = complete({ supportedVersions: ['2026-07-28'], capabilities: { tools: {}, prompts: {} }, ttlMs: 0, cacheScope: 'public' });
      } else if (message.method === 'tools/list') {
        result = complete({ tools: [{ name: 'confirm', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'private' });
      } else if (message.method === 'prompts/list') {
        result = complete({ prompts: [{ name: 'release', arguments: [{ name: 'owner', required: true }] }], ttlMs: 0, cacheScope: 'private' });
      } else if (message.method === 'prompts/get') {
        const owner = String(message.params?.arguments?.owner);
        result = {
          resultType: 'input_required',
          inputRequests: { ok: { method: 'elicitation/create', params: { mode: 'form', message: `Release for ${owner}?`, requestedSchema: { type: 'object', properties: {} } } } },
        };
      } else if (message.method === 'tools/call') {
        result = {
          resultType: 'input_required',
          inputRequests: { ok: { method: 'elicitation/create', params: { mode: 'form', message: 'Proceed?', requestedSchema: { type: 'object', properties: {} } } } },
        };
      }
      const body = result === undefined ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } } : { jsonrpc: '2.0', id: message.id, result };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    return new PushyMcpServer(http, `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  }

  close(): Promise<void> {
    this.http.closeAllConnections();
    return new Promise((resolve) => this.http.close(() => resolve()));
  }
}
