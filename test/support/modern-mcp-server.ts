/**
 * An upstream MCP server built with the SDK 2.x (`@modelcontextprotocol/server`) that speaks only the
 * 2026-07-28 revision: `createMcpHandler(..., { legacy: 'reject' })` answers `initialize` and every
 * envelope-less request with the unsupported-version error. Served from node:http on 127.0.0.1.
 *
 * Tools: `echo` (text back), `report` (each of its `messages` as a progress notification), `confide` (an
 * elicitation whose message is its `message`), `choose` (an elicitation whose option titles, of each
 * kind of choice field, name its `label`), `ask` (an elicitation as a multi-round-trip `input_required` result whose
 * state the server signs itself), `crunch` (a progress notification, then it waits until the test calls
 * `releaseCrunch()` (so a gateway that held progress back until the result would never finish), two
 * more, then a result), `quote` (a result that says it may be cached for an hour and shared), `motto` (its
 * structured output a bare string). Two resources (`bulletin` says it may be cached for an hour and shared), two
 * prompts (`offer` says the same of itself). Every JSON-RPC body it receives is kept in `received`.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, createRequestStateCodec, fromJsonSchema, inputRequired, inputResponse, McpServer } from '@modelcontextprotocol/server';

export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  body: any;
}

const objectSchema = (properties: Record<string, unknown>, required: string[] = []) => fromJsonSchema<any>({ type: 'object', properties, required } as any);

export class ModernMcpServer {
  readonly received: ReceivedRequest[] = [];
  private readonly waiting: (() => void)[] = [];
  private constructor(
    private readonly http: HttpServer,
    readonly url: string,
    private readonly close_: () => Promise<void>,
  ) {}

  /** the JSON-RPC requests received for one method */
  requestsFor(method: string): ReceivedRequest[] {
    return this.received.filter((r) => r.body?.method === method);
  }

  /** let every `crunch` call waiting after its first progress notification go on */
  releaseCrunch(): void {
    for (const go of this.waiting.splice(0)) go();
  }

  private waitForRelease(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  static async start(name = 'modern-upstream'): Promise<ModernMcpServer> {
    const codec = createRequestStateCodec<{ step: string }>({ key: 'modern-upstream-test-key-0123456789abcdef' });
    const build = () => {
      const server = new McpServer({ name, version: '2.0.0' }, { requestState: { verify: codec.verify } } as any);
      server.registerTool('echo', { description: 'Echo a message', inputSchema: objectSchema({ message: { type: 'string' } }, ['message']) }, async (args: any) => ({
        content: [{ type: 'text', text: `modern echo: ${args.message}` }],
      }));
      // a tool whose `region` argument 2026-07-28 clients mirror as the `Mcp-Param-Region` header
      server.registerTool('locate', { description: 'Says which region it ran for', inputSchema: objectSchema({ region: { type: 'string', 'x-mcp-header': 'Region' } }, ['region']) }, async (args: any) => ({
        content: [{ type: 'text', text: `located in ${args.region}` }],
      }));
      // 2026-07-28 lets structured output be any JSON value: this one is a list, which 2025-11-25 cannot carry
      server.registerTool('tags', { description: 'Lists tags', inputSchema: objectSchema({}), outputSchema: fromJsonSchema<any>({ type: 'array', items: { type: 'string' } } as any) } as any, async () => ({
        content: [{ type: 'text', text: '["red","blue"]' }],
        structuredContent: ['red', 'blue'],
      }) as any);
      // 2026-07-28 structured output may be a bare string too: this one's is text a guardrail must read
      server.registerTool('motto', { description: 'Says its motto', inputSchema: objectSchema({}), outputSchema: fromJsonSchema<any>({ type: 'string' } as any) } as any, async () => ({
        content: [{ type: 'text', text: 'write to desk@example.com' }],
        structuredContent: 'write to desk@example.com',
      }) as any);
      server.registerTool('ask', { description: 'Asks the user for a colour', inputSchema: objectSchema({}) }, async (_args: any, ctx: any) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'colour');
        const state = ctx.mcpReq.requestState() as { step: string } | undefined;
        if (answer.kind === 'elicit' && state?.step === 'asked') {
          return { content: [{ type: 'text', text: `you chose ${answer.action === 'accept' ? String(answer.content?.colour) : answer.action}` }] };
        }
        return inputRequired({
          inputRequests: { colour: inputRequired.elicit({ message: 'Which colour?', requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] } as any }) },
          requestState: await codec.mint({ step: 'asked' }),
        });
      });
      server.registerTool('crunch', { description: 'Reports progress, then answers', inputSchema: objectSchema({}) }, async (_args: any, ctx: any) => {
        const token = ctx.mcpReq._meta?.progressToken;
        if (token !== undefined) {
          for (let i = 1; i <= 3; i++) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: 3, message: `step ${i}` } });
            if (i === 1) await self!.waitForRelease();
          }
        }
        return { content: [{ type: 'text', text: 'crunched' }] };
      });
      server.registerTool('report', { description: 'Reports each of its messages as progress, then answers', inputSchema: objectSchema({ messages: { type: 'array', items: { type: 'string' } } }, ['messages']) }, async (args: any, ctx: any) => {
        const token = ctx.mcpReq._meta?.progressToken;
        const messages = args.messages as string[];
        if (token !== undefined) {
          for (const [i, message] of messages.entries()) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i + 1, total: messages.length, message } });
        }
        return { content: [{ type: 'text', text: 'reported' }] };
      });
      server.registerTool('confide', { description: 'Asks the user to confirm its message', inputSchema: objectSchema({ message: { type: 'string' } }, ['message']) }, async (args: any, ctx: any) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
        if (answer.kind === 'elicit') return { content: [{ type: 'text', text: `confided: ${answer.action}` }] };
        const requestedSchema = { type: 'object', properties: { ok: { type: 'boolean', title: 'OK?', description: `Confirm: ${args.message}` } } };
        return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: args.message, requestedSchema: requestedSchema as any }) } });
      });
      server.registerTool('choose', { description: 'Asks the user to pick options named after its label', inputSchema: objectSchema({ label: { type: 'string' } }, ['label']) }, async (args: any, ctx: any) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'pick');
        if (answer.kind === 'elicit') return { content: [{ type: 'text', text: `picked: ${answer.action}` }] };
        const requestedSchema = {
          type: 'object',
          properties: {
            one: { type: 'string', title: 'One', oneOf: [{ const: 'a', title: `Send to ${args.label}` }, { const: 'b', title: 'Keep it' }] },
            many: { type: 'array', title: 'Many', items: { anyOf: [{ const: 'c', title: `Copy ${args.label}` }, { const: 'd', title: 'Drop it' }] } },
            old: { type: 'string', title: 'Old', enum: ['e', 'f'], enumNames: [`Email ${args.label}`, 'Forget it'] },
          },
        };
        return inputRequired({ inputRequests: { pick: inputRequired.elicit({ message: 'Pick one', requestedSchema: requestedSchema as any }) } });
      });
      server.registerResource('notes', 'modern://notes', { mimeType: 'text/plain' }, async (uri: URL) => ({ contents: [{ uri: uri.href, text: 'modern notes' }] }));
      // says any client may keep it for an hour and serve it to any user
      server.registerResource('bulletin', 'modern://bulletin', { mimeType: 'text/plain' }, async (uri: URL) => ({
        contents: [{ uri: uri.href, text: 'write to desk@example.com' }],
        ttlMs: 3_600_000,
        cacheScope: 'public',
      }));
      // a tool and a prompt whose results claim any client may keep them for an hour and share them
      server.registerTool('quote', { description: 'Quotes a price', inputSchema: objectSchema({}) }, async () => ({
        content: [{ type: 'text', text: 'your price: 42' }],
        ttlMs: 3_600_000,
        cacheScope: 'public',
      }) as any);
      server.registerPrompt('offer', { description: 'An offer', argsSchema: objectSchema({}) } as any, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'your offer: 42' } }],
        ttlMs: 3_600_000,
        cacheScope: 'public',
      }) as any);
      server.registerPrompt('greet', { description: 'A greeting', argsSchema: objectSchema({ who: { type: 'string' } }, ['who']) } as any, (args: any) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Hello ${args.who} from the modern server` } }],
      }));
      return server;
    };
    const handler = createMcpHandler(build, { legacy: 'reject' });
    let self: ModernMcpServer | undefined;
    const http = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      if (text) {
        try {
          self?.received.push({ headers: req.headers, body: JSON.parse(text) });
        } catch {
          /* the handler answers unreadable bodies itself */
        }
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? text : undefined });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (!response.body) return void res.end();
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const port = (http.address() as AddressInfo).port;
    self = new ModernMcpServer(http, `http://127.0.0.1:${port}/mcp`, async () => {
      self?.releaseCrunch();
    await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    });
    return self;
  }

  close(): Promise<void> {
    return this.close_();
  }
}
