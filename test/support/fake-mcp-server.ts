/**
 * A real streamable-HTTP MCP server built with the official SDK, listening on 127.0.0.1:0, scripted per
 * test: tools, prompts and resources can be added or changed while it runs, every HTTP request it
 * receives is recorded (headers included), and it can be told to hang, to expire its sessions or to stop.
 *
 * `stateful: false` (default) answers every POST with a fresh SDK transport and no session, the way most
 * hosted MCP servers run; `stateful: true` issues an `Mcp-Session-Id` at `initialize` and answers 404 to a
 * session it no longer knows (what the spec asks of an expired session).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  ErrorCode,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';

/**
 * `progress` sends a progress notification for this call (when the caller asked for them), with its `message` if given;
 * `extra` is the SDK's own (the call's request id, `sendRequest` for a request of the server's to the client).
 */
export type ToolHandler = (
  args: Record<string, unknown>,
  headers: http.IncomingHttpHeaders,
  progress: (done: number, total?: number, message?: string) => Promise<void>,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
) => CallToolResult | Promise<CallToolResult>;

export interface FakeTool {
  description?: string;
  inputSchema?: Record<string, unknown>;
  /** default: echoes its arguments as JSON text */
  handler?: ToolHandler;
  /** any further fields sent in tools/list as they are (annotations, title, outputSchema...) */
  extra?: Record<string, unknown>;
}

export interface FakePrompt {
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
  /** the text of the single user message returned by prompts/get */
  text: (args: Record<string, string>) => string;
  /** further fields of the prompts/get result (a description, `_meta`), sent as they are */
  getExtra?: Record<string, unknown>;
}

export interface FakeResource {
  name: string;
  mimeType?: string;
  text: string;
  /** read as a base64 `blob` of the text's UTF-8 bytes instead of as `text` */
  asBlob?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** path and query as received */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** name, value, name, value... as received: node folds names like `constructor` oddly into `headers` */
  rawHeaders: string[];
  /** the JSON-RPC method(s) in the body, when it had one */
  rpcMethods: string[];
  /** not answered in full and not closed by the client yet (a held request stays open until either) */
  open: boolean;
}

export interface FakeMcpServerOptions {
  stateful?: boolean;
  name?: string;
  tools?: Record<string, FakeTool>;
  prompts?: Record<string, FakePrompt>;
  resources?: Record<string, FakeResource>;
  /** `read` answers undefined for a URI the template matches but the server does not have: "not found" */
  resourceTemplates?: { uriTemplate: string; name: string; read: (uri: string) => string | undefined | Promise<string | undefined> }[];
  /** leave out the prompts and resources capabilities */
  toolsOnly?: boolean;
  /** record received requests (default true; the benchmark turns it off) */
  record?: boolean;
  /** answer requests as SSE streams (so progress notifications can precede the result); default JSON */
  sseResponses?: boolean;
  /** list this many tools per tools/list page (the cursor is the next tool's index); default all at once */
  toolsPerPage?: number;
  /** list this many resources per resources/list page, likewise; default all at once */
  resourcesPerPage?: number;
}

const DEFAULT_SCHEMA = { type: 'object', properties: {} };

export class FakeMcpServer {
  readonly tools = new Map<string, FakeTool>();
  readonly prompts = new Map<string, FakePrompt>();
  readonly resources = new Map<string, FakeResource>();
  readonly resourceTemplates: NonNullable<FakeMcpServerOptions['resourceTemplates']>;
  readonly requests: RecordedRequest[] = [];
  /** while set, requests are held without an answer until released (for timeout tests) */
  hang = false;
  /** while set, only requests carrying this JSON-RPC method are held, until released */
  holdRpc: string | undefined;
  /** answer every HTTP request with this status (e.g. 500, 401) while set */
  failWithStatus: number | undefined;
  /** the body sent with `failWithStatus` (default "scripted failure"); may echo the request headers */
  failBody: ((headers: http.IncomingHttpHeaders) => string) | undefined;
  private readonly held: (() => void)[] = [];
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  private readonly sessionServers = new Map<string, Server>();
  private readonly http: http.Server;
  private readonly stateful: boolean;
  private readonly serverName: string;
  private readonly toolsOnly: boolean;
  private readonly record: boolean;
  private readonly sseResponses: boolean;
  private readonly toolsPerPage: number | undefined;
  private readonly resourcesPerPage: number | undefined;
  url = '';

  private constructor(options: FakeMcpServerOptions) {
    this.stateful = options.stateful ?? false;
    this.serverName = options.name ?? 'fake-mcp';
    this.toolsOnly = options.toolsOnly ?? false;
    this.record = options.record ?? true;
    this.sseResponses = options.sseResponses ?? false;
    this.toolsPerPage = options.toolsPerPage;
    this.resourcesPerPage = options.resourcesPerPage;
    for (const [name, tool] of Object.entries(options.tools ?? {})) this.tools.set(name, tool);
    for (const [name, prompt] of Object.entries(options.prompts ?? {})) this.prompts.set(name, prompt);
    for (const [uri, resource] of Object.entries(options.resources ?? {})) this.resources.set(uri, resource);
    this.resourceTemplates = options.resourceTemplates ?? [];
    this.http = http.createServer({ noDelay: true, keepAliveTimeout: 30_000 }, (req, res) => void this.handle(req, res));
  }

  static async start(options: FakeMcpServerOptions = {}): Promise<FakeMcpServer> {
    const server = new FakeMcpServer(options);
    await new Promise<void>((resolve) => server.http.listen(0, '127.0.0.1', resolve));
    const { port } = server.http.address() as AddressInfo;
    server.url = `http://127.0.0.1:${port}/mcp`;
    return server;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  setTool(name: string, tool: FakeTool = {}): void {
    this.tools.set(name, tool);
  }

  removeTool(name: string): void {
    this.tools.delete(name);
  }

  /** the recorded requests that carried a JSON-RPC call of this method */
  requestsFor(rpcMethod: string): RecordedRequest[] {
    return this.requests.filter((r) => r.rpcMethods.includes(rpcMethod));
  }

  /** forget every session, so a client still using one gets 404 */
  expireSessions(): void {
    for (const transport of this.sessions.values()) void transport.close();
    this.sessions.clear();
    this.sessionServers.clear();
  }

  /** stateful only: tell every open session that the tool list changed (sent on its GET event stream) */
  async notifyToolListChanged(): Promise<void> {
    await Promise.all([...this.sessionServers.values()].map((server) => server.sendToolListChanged()));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  releaseHeld(): void {
    this.hang = false;
    this.holdRpc = undefined;
    for (const release of this.held.splice(0)) release();
  }

  async close(): Promise<void> {
    this.releaseHeld();
    this.expireSessions();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const rpcMethods = (Array.isArray(body) ? body : [body]).flatMap((m) => (m && typeof m.method === 'string' ? [m.method] : []));
      if (this.record) {
        const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, rpcMethods, open: !res.closed };
        res.once('close', () => (recorded.open = false));
        this.requests.push(recorded);
      }
      if (this.hang || (this.holdRpc !== undefined && rpcMethods.includes(this.holdRpc))) await new Promise<void>((resolve) => this.held.push(resolve));
      if (this.failWithStatus) {
        res.writeHead(this.failWithStatus, { 'content-type': 'text/plain' }).end(this.failBody?.(req.headers) ?? 'scripted failure');
        return;
      }
      if (!this.stateful) {
        if (req.method !== 'POST') {
          res.writeHead(405, { allow: 'POST' }).end();
          return;
        }
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !this.sseResponses });
        const server = this.buildServer(req.headers);
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const transport = this.sessions.get(sessionId);
        if (!transport) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: !this.sseResponses,
        onsessioninitialized: (id) => {
          this.sessions.set(id, transport);
          this.sessionServers.set(id, server);
        },
        // a client that ends its session (DELETE) leaves nothing behind here, as with a real server
        onsessionclosed: (id) => {
          this.sessions.delete(id);
          this.sessionServers.delete(id);
        },
      });
      const server = this.buildServer(req.headers);
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String((err as Error).message));
    }
  }

  /** One SDK server whose handlers read the current scripted state (so changes apply at once). */
  private buildServer(headers: http.IncomingHttpHeaders): Server {
    const capabilities = this.toolsOnly ? { tools: { listChanged: true } } : { tools: { listChanged: true }, prompts: {}, resources: {} };
    const server = new Server({ name: this.serverName, version: '1.0.0' }, { capabilities });
    server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const tools = [...this.tools].map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema ?? DEFAULT_SCHEMA, ...t.extra })) as any[];
      if (this.toolsPerPage === undefined) return { tools };
      const start = Number(request.params?.cursor ?? 0);
      const end = start + this.toolsPerPage;
      return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = this.tools.get(request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const progressToken = request.params._meta?.progressToken;
      const progress = async (done: number, total?: number, message?: string) => {
        if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: done, total, ...(message === undefined ? {} : { message }) } });
      };
      if (tool.handler) return tool.handler(args, headers, progress, extra);
      return { content: [{ type: 'text', text: JSON.stringify(args) }] };
    });
    if (this.toolsOnly) return server;
    server.setRequestHandler(ListPromptsRequestSchema, () => ({
      prompts: [...this.prompts].map(([name, p]) => ({ name, description: p.description, arguments: p.arguments })),
    }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => {
      const prompt = this.prompts.get(request.params.name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Prompt ${request.params.name} not found`);
      return { messages: [{ role: 'user', content: { type: 'text', text: prompt.text(request.params.arguments ?? {}) } }], ...prompt.getExtra };
    });
    server.setRequestHandler(ListResourcesRequestSchema, (request) => {
      const resources = [...this.resources].map(([uri, r]) => ({ uri, name: r.name, mimeType: r.mimeType }));
      if (this.resourcesPerPage === undefined) return { resources };
      const start = Number(request.params?.cursor ?? 0);
      const end = start + this.resourcesPerPage;
      return { resources: resources.slice(start, end), ...(end < resources.length ? { nextCursor: String(end) } : {}) };
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: this.resourceTemplates.map((t) => ({ uriTemplate: t.uriTemplate, name: t.name })),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      const resource = this.resources.get(uri);
      if (resource?.asBlob) return { contents: [{ uri, mimeType: resource.mimeType, blob: Buffer.from(resource.text, 'utf8').toString('base64') }] };
      if (resource) return { contents: [{ uri, mimeType: resource.mimeType, text: resource.text }] };
      for (const template of this.resourceTemplates) {
        const prefix = template.uriTemplate.split('{')[0];
        const text = uri.startsWith(prefix) ? await template.read(uri) : undefined;
        if (text !== undefined) return { contents: [{ uri, text }] };
      }
      throw new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`);
    });
    return server;
  }
}

async function readJson(req: http.IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}
