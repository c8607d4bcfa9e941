/**
 * `POST /mcp`: the gateway as one streamable-HTTP MCP server (interface.md §4.4), stateless: no
 * handshake needed, no session. Scripts post bare JSON-RPC (`tools/list`, `tools/call`, ...) with
 * `Accept: application/json`; standard MCP clients may `initialize` first and get an answer that lets
 * them go on. Revision 2026-07-28 is served beside 2025-11-25, chosen per message (revision.ts):
 * `server/discover` (answered with or without a key), results with `resultType`, `input_required`
 * relayed with a gateway-signed state (relay-state.ts), progress streamed as SSE when asked for.
 * `tools/call` runs through the whole pipeline (auth, scope, route, pre-guardrail, call,
 * post-guardrail, spend) under either revision; listing methods authenticate and scope, and answer from
 * the discovery cache.
 *
 * HTTP statuses: 401 missing or bad key (503 store_unavailable when the store cannot say whether it exists),
 * 403 an `Origin` not in `server.allowedOrigins` (DNS rebinding), 400 unreadable JSON (-32700) or an invalid
 * JSON-RPC message (-32600), 405 for every method but POST and OPTIONS, 415 for a body that is not JSON, 406
 * when the client accepts neither JSON nor SSE, 202 for notifications only; everything else is 200 with a
 * JSON-RPC result or error. Every error on /mcp and below it, whatever the method, is a JSON-RPC error body
 * (error-shapes.ts JSONRPC_ERRORS).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Router } from 'express';
import { AuthenticationError, GatewayError, InvalidRequestError, PermissionError, StoreUnavailableError, toGatewayError } from '../../errors/gateway-error';
import { JSONRPC, jsonRpcErrorBody } from '../../errors/render';
import { GatewayContext, type AuthedContext } from '../../pipeline/context';
import { MCP_GATEWAY, type McpGateway } from './mcp-gateway';
import type { McpCallMethod } from './mcp-exchange';
import { isResourceNotFound, McpTraffic, toolErrorResult } from './mcp-traffic';
import { initializeResult } from './protocol';
import type { McpRelay } from './mcp-exchange';
import { RelayStateSigner, relayStateKey } from './relay-state';
import { STORE } from '../../plugins/tokens';
import type { StoreBackend } from '../../store/store-backend';
import { checkParamHeaders, clientRevision, discoverResult, resultFor, RevisionError, toolsFor, type ClientRevision } from './revision';
import type { ProgressUpdate } from './upstream-session';
import { childSignal, type ChildSignal } from '../../upstream/child-signal';
import { mcpHeadersOf, type InboundHeaders } from './upstream-headers';
import { bearerToken, providerVisibleHeaders } from '../../http/credentials';
import { onClientGone } from '../../http/client-gone';
import { JSONRPC_ERRORS, sendError } from '../../http/error-shapes';
import { EVENT_STREAM_HEADERS } from '../../http/event-stream-headers';
import type { GatewayServices } from '../../http/gateway-services';
import type { JsonPostHandler } from '../../http/fast-json-routes';
import { requestIdOf } from '../../http/request-id';
import { orgKeyId } from '../../auth/org-key-id';

type RpcId = string | number | null;
interface RpcReply {
  body?: unknown;
}

/** one HTTP request may not queue an unbounded number of tool calls */
const MAX_BATCH = 100;

const METHOD_NOT_ALLOWED = { jsonrpc: '2.0', id: null, error: { code: JSONRPC.INVALID_REQUEST, message: 'Method not allowed: this gateway is stateless; POST JSON-RPC requests to /mcp.' } };

export function installMcpRoutes(router: Router, services: GatewayServices): void {
  const mcp = services.container.resolve<McpGateway>(MCP_GATEWAY);
  const traffic = services.container.resolve(McpTraffic);
  const allowedOrigins = new Set(services.config.server.allowedOrigins);
  // relayed input requests are signed under a key derived from the store's secret key (relay-state.ts)
  const relayStates = new RelayStateSigner(relayStateKey(services.container.resolve<StoreBackend>(STORE).secretBox));
  const inFlight = new InFlightRequests();

  /** DNS rebinding guard: a browser page may only call us from an allowed origin. */
  const originAllowed = (req: IncomingMessage, res: ServerResponse): boolean => {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    if (!allowedOrigins.has(origin) && !allowedOrigins.has('*')) {
      writeJson(res, 403, rpcError(null, new PermissionError(`Origin ${JSON.stringify(origin)} is not allowed.`, 'origin_not_allowed')));
      return false;
    }
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', 'x-gateway-request-id, mcp-protocol-version');
    res.setHeader('vary', 'Origin');
    return true;
  };

  router.options('/mcp', (req, res) => {
    if (!originAllowed(req, res)) return;
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    // per-user credentials are named after each server (x-mcp-<alias>-<header>), and a 2026-07-28 client
    // mirrors a tool's arguments as Mcp-Param-<Name> headers named by its input schema: allow the ones asked for
    const requested = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => (h.startsWith('x-mcp-') || h.startsWith('mcp-param-')) && /^[a-z0-9_.!#$%&'*+^`|~-]+$/.test(h) && h !== 'x-mcp-servers');
    res.setHeader('vary', 'Origin, Access-Control-Request-Headers');
    // authorization: the key of a client that can set only that header (never CORS-safelisted, so named)
    res.setHeader('access-control-allow-headers', ['content-type, accept, authorization, x-gateway-api-key, x-mcp-servers, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id', ...requested].join(', '));
    res.statusCode = 204;
    res.end();
  });

  // GET (no server-initiated stream), DELETE (no session), PUT and every other method: JSON-RPC 405.
  router.all('/mcp', (req, res) => {
    if (!originAllowed(req, res)) return;
    res.setHeader('allow', 'POST');
    writeJson(res, 405, METHOD_NOT_ALLOWED);
  });

  // POST /mcp is served straight from node:http (like chat): the fast JSON router reads the body.
  const postMcp: JsonPostHandler = async (req, res, body) => {
    if (!originAllowed(req, res)) return;
    const messages = body === undefined ? [] : Array.isArray(body) ? body : [body];
    const firstId = idOf(messages[0]);

    const abort = new AbortController();
    // The HTTP request is the parent of its messages: signed in once by the auth stage (the admin key
    // may use MCP), its scope resolved once; each tools/call, prompts/get, resources/read is a child
    // exchange that runs the stages under that principal.
    const parent = new GatewayContext('mcp', 'mcp', services.clock.now(), { headers: providerVisibleHeaders(req.headers) }, abort.signal, requestIdOf(res));
    const credential = mcpKey(req.headers);
    parent.credential = credential;
    // server/discover says nothing about any key's scope: a client may ask it before it has a key
    const discoverOnly = messages.length > 0 && messages.every((m) => (m as { method?: unknown } | null)?.method === 'server/discover');
    try {
      // before the message's shape is judged: a caller without a valid key learns nothing of it
      if (!(discoverOnly && !credential)) await services.auth.signIn(parent, true);
    } catch (err) {
      // a store that cannot say whether the key exists is a 503 store_unavailable (with its Retry-After),
      // as on every other endpoint: never read as an unknown key, which the client's key may not be
      const refused = err instanceof StoreUnavailableError ? err : keyRefused(credential);
      for (const [name, value] of Object.entries(refused.headers)) res.setHeader(name, value);
      writeJson(res, refused.status, rpcError(firstId, refused));
      // no log entry without a key, but a flood of bad keys must show in the metrics as it does on chat
      services.reporter.refusedBeside('mcp', undefined, refused.status, parent.startedAt, services.clock.now());
      return;
    }
    // counted, and a valid key's given its access line, as a body that could not be read is
    // (refuseUnreadBody): these refusals showed in no metric and no log
    const refusedShape = (error: GatewayError) => {
      const principal = parent.principal;
      if (principal) services.reporter.refusedKnown('mcp', principal, error, requestIdOf(res), parent.startedAt, services.clock.now());
      else services.reporter.refusedBeside('mcp', undefined, error.status, parent.startedAt, services.clock.now());
    };
    // behind the key too, as every other refusal of how the request is put
    const accept = negotiate(req.headers.accept);
    if (!accept) {
      writeJson(res, 406, { jsonrpc: '2.0', id: null, error: { code: JSONRPC.INVALID_REQUEST, message: 'Not Acceptable: accept application/json or text/event-stream.' } });
      refusedShape(new GatewayError(406, 'invalid_request_error', 'not_acceptable', 'Not Acceptable.'));
      return;
    }
    if (body === undefined) {
      writeAccepted(res, 400, { jsonrpc: '2.0', id: null, error: { code: JSONRPC.PARSE_ERROR, message: 'Parse error: the request body is empty.' } }, accept);
      refusedShape(new InvalidRequestError('The request body is empty.', 'invalid_json'));
      return;
    }
    if (messages.length === 0 || messages.length > MAX_BATCH) {
      const why = messages.length === 0 ? 'empty batch' : `a batch holds at most ${MAX_BATCH} messages`;
      writeAccepted(res, 400, { jsonrpc: '2.0', id: null, error: { code: JSONRPC.INVALID_REQUEST, message: `Invalid Request: ${why}.` } }, accept);
      refusedShape(new InvalidRequestError(`Invalid Request: ${why}.`));
      return;
    }

    const stopWatching = onClientGone(res, () => abort.abort());
    const stream = new ProgressStream(res, acceptsEventStream(req.headers.accept));
    const call: CallContext = {
      services,
      mcp,
      traffic,
      res,
      parent: parent as AuthedContext,
      mcpHeaders: mcpHeadersOf(req.headers),
      signal: abort.signal,
      revisionHeaders: { version: singleHeader(req.headers['mcp-protocol-version']), method: singleHeader(req.headers['mcp-method']), name: singleHeader(req.headers['mcp-name']) },
      paramHeaders: paramHeadersOf(req.headers),
      relayStates,
      stream,
      inFlight,
      ownIds: messages.filter(isExchange).length > 1,
    };
    const replies: RpcReply[] = [];
    for (const message of messages) {
      // each message gets a signal of its own: the MCP SDK never removes its abort listeners, and a batch
      // would otherwise pile them on the request's signal (MaxListenersExceededWarning)
      const step = childSignal(abort.signal);
      // server/discover may come without a key: nothing of it can be cancelled
      const untrack = call.parent.principal ? inFlight.track(callerOf(call.parent.principal), message, step) : undefined;
      let reply: RpcReply;
      try {
        reply = await handleMessage({ ...call, signal: step.signal }, message);
      } finally {
        untrack?.();
        step.release();
      }
      // a request the client cancelled gets no answer (MCP: the receiver does not respond to it)
      replies.push(step.signal.aborted && !abort.signal.aborted ? {} : reply);
    }
    stopWatching();

    const bodies = replies.filter((r) => r.body !== undefined).map((r) => r.body);
    // one refused message: its pause as HTTP too, as on the model endpoints (a batch's answers each keep their own)
    const pause = !Array.isArray(body) && bodies.length === 1 ? limitPause(bodies[0]) : undefined;
    if (pause !== undefined && !res.headersSent) res.setHeader('retry-after', String(pause));
    if (stream.opened) {
      // progress went out already: the answers follow on the same stream
      for (const b of bodies) stream.write(b);
      res.end();
    } else if (bodies.length === 0) {
      res.writeHead(202).end();
    } else if (!Array.isArray(body) && bodies.length === 1 && isInvalid(bodies[0])) {
      writeAccepted(res, 400, bodies[0], accept); // a single message that was not JSON-RPC at all, or in a revision we do not serve
    } else if (accept === 'sse') {
      res.writeHead(200, EVENT_STREAM_HEADERS);
      for (const b of bodies) res.write(sseFrame(b));
      res.end();
    } else {
      writeJson(res, 200, Array.isArray(body) ? bodies : bodies[0]);
    }
  };
  // `/mcp/` too: the express routes above answer it as /mcp (its CORS preflight allows POST), so a client
  // configured with the trailing slash had its POST refused with 405 and `Allow: POST`
  for (const path of ['/mcp', '/mcp/']) services.fastRoutes.add(path, JSONRPC_ERRORS, postMcp, undefined, refuseUnreadBody);

  // a body that could not be read waits behind the key, so a caller without one learns nothing of it
  async function refuseUnreadBody(req: IncomingMessage, res: ServerResponse, error: GatewayError): Promise<void> {
    const startedAt = services.clock.now();
    const credential = mcpKey(req.headers);
    let unreachable: StoreUnavailableError | undefined;
    const known = await services.auth.principalOf(credential).catch((err: unknown) => {
      // a store that cannot say whether the key exists: its 503, never the unknown key's 401 (as above)
      if (err instanceof StoreUnavailableError) unreachable = err;
      return undefined;
    });
    // a client that reads only event streams gets the refusal of its body as one
    sendError(res, known ? error : (unreachable ?? keyRefused(credential)), JSONRPC_ERRORS, known !== undefined && negotiate(req.headers.accept) === 'sse');
    // a valid key's 400/413/415 is counted and gets its access line, as on the model endpoints
    if (known) services.reporter.refusedKnown('mcp', known, error, requestIdOf(res), startedAt, services.clock.now());
    else services.reporter.refusedBeside('mcp', undefined, unreachable?.status ?? 401, startedAt, services.clock.now());
  }
}

function keyRefused(credential: string | undefined): AuthenticationError {
  return new AuthenticationError(credential ? 'Invalid API key.' : 'Missing API key: send x-gateway-api-key: Bearer <key> (or Authorization: Bearer <key>).');
}

interface CallContext {
  services: GatewayServices;
  mcp: McpGateway;
  traffic: McpTraffic;
  res: ServerResponse;
  /** the HTTP request, signed in: the parent of each message's exchange */
  parent: AuthedContext;
  mcpHeaders: InboundHeaders;
  signal: AbortSignal;
  /** `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`, checked against each message's envelope */
  revisionHeaders: { version?: string; method?: string; name?: string };
  /** 2026-07-28 `Mcp-Param-*` headers, by the lower-cased rest of their name */
  paramHeaders: ReadonlyMap<string, string>;
  relayStates: RelayStateSigner;
  stream: ProgressStream;
  inFlight: InFlightRequests;
  /**
   * a batch with several exchanges: each gets a request id of its own (the HTTP request's is their
   * parent), else their log entries share one id and the log shows one of them under it
   */
  ownIds: boolean;
}

async function handleMessage(call: CallContext, message: unknown): Promise<RpcReply> {
  if (!message || typeof message !== 'object' || Array.isArray(message)) return { body: invalid(null, 'the message must be a JSON-RPC 2.0 object') };
  const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  const hasId = 'id' in m && m.id !== undefined;
  if (hasId && !(typeof m.id === 'string' || typeof m.id === 'number' || m.id === null)) return { body: invalid(null, 'id must be a string or a number') };
  const id = hasId ? (m.id as RpcId) : null;
  if (m.jsonrpc !== '2.0') return { body: invalid(id, 'jsonrpc must be "2.0"') };
  if (typeof m.method !== 'string') {
    // a response from the client (to a server request we never send): nothing to answer
    if (hasId && ('result' in m || 'error' in m)) return {};
    return { body: invalid(id, 'method must be a string') };
  }
  // MCP: a request's id must not be null (a response to a message whose id could not be read has it null)
  if (m.id === null) return { body: invalid(null, 'id must be a string or a number, never null') };
  if (!hasId) {
    // a notification: accepted, no answer. A client on 2025-11-25 or older gives up a request by
    // sending notifications/cancelled in a POST of its own, leaving the request's POST open.
    if (m.method === 'notifications/cancelled' && call.parent.principal) call.inFlight.cancel(callerOf(call.parent.principal), (m.params as { requestId?: unknown } | undefined)?.requestId);
    return {};
  }
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) {
    return { body: rpcErrorRaw(id, JSONRPC.INVALID_PARAMS, 'params must be an object') };
  }
  const params = (m.params ?? {}) as Record<string, unknown>;
  try {
    const client = clientRevision(m.method, params, call.revisionHeaders);
    if (m.method === 'server/discover') return { body: { jsonrpc: '2.0', id, result: resultFor({ modern: true, capabilities: {} }, m.method, discoverResult()) } };
    if (isExchange(m)) return await runExchange(call, id, m.method as McpCallMethod, params, client);
    const result = await answer(call, m.method, params, client);
    if (result === undefined) return { body: rpcErrorRaw(id, JSONRPC.METHOD_NOT_FOUND, `Method not found: ${m.method}`) };
    return { body: { jsonrpc: '2.0', id, result: resultFor(client, m.method, result) } };
  } catch (err) {
    // a revision we do not serve: the revision's own code, and the versions we do (HTTP 400)
    if (err instanceof RevisionError) return { body: { jsonrpc: '2.0', id, error: { code: err.rpcCode, message: err.message, ...(err.rpcData ? { data: err.rpcData } : {}) } } };
    return { body: rpcError(id, toGatewayError(err), call) };
  }
}

/** The methods answered by the gateway itself: the lists run the scope (cached discovery), nothing upstream. `undefined` = method not found. */
async function answer(call: CallContext, method: string, params: Record<string, unknown>, client: ClientRevision): Promise<unknown> {
  const { mcp } = call;
  switch (method) {
    case 'initialize':
      return initializeResult(params.protocolVersion);
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: toolsFor(client, mcp.view.listTools(await scopeOf(call))) };
    case 'prompts/list':
      return { prompts: mcp.view.listPrompts(await scopeOf(call)) };
    case 'resources/list':
      return { resources: mcp.view.listResources(await scopeOf(call)) };
    case 'resources/templates/list':
      return { resourceTemplates: mcp.view.listResourceTemplates(await scopeOf(call)) };
    default:
      return undefined;
  }
}

/** a message that runs every stage and writes a log entry of its own */
function isExchange(message: unknown): boolean {
  const method = (message as { method?: unknown } | null)?.method;
  return method === 'tools/call' || method === 'prompts/get' || method === 'resources/read';
}

function scopeOf(call: CallContext) {
  return call.traffic.scopeOf(call.parent, call.mcpHeaders);
}

/**
 * tools/call, prompts/get, resources/read: a child exchange through every stage. A guardrail block (and
 * a gateway_proxy model call that failed) is a tool error the model can read; its reason never quotes
 * the blocked text.
 */
async function runExchange(call: CallContext, id: RpcId, method: McpCallMethod, params: Record<string, unknown>, client: ClientRevision): Promise<RpcReply> {
  const { services, parent } = call;
  const ctx = parent.child('mcp', 'own', services.clock.now(), call.signal, call.ownIds ? randomUUID() : parent.requestId);
  const args = params.arguments;
  const name = typeof params.name === 'string' ? params.name : '';
  ctx.mcp = {
    method,
    toolName: method === 'resources/read' ? undefined : name,
    uri: method === 'resources/read' && typeof params.uri === 'string' ? params.uri : undefined,
    arguments: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : method === 'tools/call' ? {} : undefined,
    mcpHeaders: call.mcpHeaders,
  };
  // parse and validate before anything runs: a malformed call is a JSON-RPC error, not a pipeline run
  if (method === 'resources/read') requireStringParam(params, 'uri');
  else if (method === 'prompts/get') requireStringParam(params, 'name');
  else if (!name) throw new GatewayError(400, 'invalid_request_error', 'invalid_params', 'params.name must be the name of a tool.', { param: 'name' });
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new GatewayError(400, 'invalid_request_error', 'invalid_params', 'params.arguments must be an object.', { param: 'arguments' });
  }
  const called = method === 'resources/read' ? String(params.uri) : name;
  if (client.modern && method === 'tools/call' && call.paramHeaders.size > 0) {
    // checked against the tool as listed to this key; a name it cannot call is answered by the route stage
    const routed = call.mcp.view.routeTool(await scopeOf(call), name);
    if (routed) checkParamHeaders(call.mcp.listedTool(routed)?.inputSchema, ctx.mcp.arguments, call.paramHeaders);
  }
  ctx.mcp.relay = await relayOf(call, method, called, params, client);
  let body: unknown;
  await services.pipeline.execute(ctx, {
    async deliver(done) {
      const ex = done.mcpExchange;
      let result = ex.result as Record<string, unknown>;
      if (ex.inputRequired) {
        // the client answers the upstream through us: the state it echoes is ours, signed, and names the server
        const upstreamState = typeof result.requestState === 'string' ? result.requestState : undefined;
        const state = await call.relayStates.mint({ serverId: ex.serverId ?? '', method, name: called, keyId: parent.principal.keyId, org: parent.principal.org, upstreamState });
        result = { ...result, requestState: state };
      }
      body = { jsonrpc: '2.0', id, result: resultFor(client, method, result) };
    },
    fail(failed, error) {
      const asResult = method === 'tools/call' && (error.code === 'guardrail_blocked' || failed.mcp?.failureIsToolResult === true);
      // the driver has logged an internal error already
      const rendered = jsonRpcErrorBody(id, error);
      // 2026-07-28: a resource not found is -32602 whose data is the URI alone (what the SDK reads as its
      // ResourceNotFoundError), not 2025-11-25's -32002 and not data naming the gateway's own code
      const notFound = client.modern && method === 'resources/read' && isResourceNotFound(error);
      const failure = notFound ? { ...rendered, error: { code: JSONRPC.INVALID_PARAMS, message: rendered.error.message, data: { uri: called } } } : rendered;
      body = asResult ? { jsonrpc: '2.0', id, result: resultFor(client, method, toolErrorResult(error)) } : failure;
    },
  });
  // a client that went away gets no answer (the outcome is logged as client_abort)
  return { body: body ?? jsonRpcErrorBody(id, new GatewayError(499, 'api_error', 'client_closed', 'The client closed the request.')) };
}

/**
 * What this call may relay: `input_required` (a 2026-07-28 client), the answers of a retry (checked
 * against the gateway-signed state it echoes), and progress (a token, and a client reading SSE).
 */
async function relayOf(call: CallContext, method: McpCallMethod, called: string, params: Record<string, unknown>, client: ClientRevision): Promise<McpRelay> {
  const relay: McpRelay = { modern: client.modern, clientCapabilities: client.capabilities };
  const meta = params._meta as { progressToken?: unknown } | undefined;
  const token = meta && typeof meta === 'object' ? meta.progressToken : undefined;
  if ((typeof token === 'string' || typeof token === 'number') && call.stream.enabled) relay.onProgress = (p) => call.stream.progress(token, p);
  if (!client.modern) return relay;
  const { inputResponses, requestState } = params;
  if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) {
    throw new GatewayError(400, 'invalid_request_error', 'invalid_params', 'params.inputResponses must be an object.', { param: 'inputResponses' });
  }
  if (inputResponses !== undefined && requestState === undefined) {
    throw new GatewayError(400, 'invalid_request_error', 'invalid_request_state', 'params.inputResponses needs the requestState the gateway returned with the input requests.', { param: 'requestState' });
  }
  if (requestState !== undefined) {
    const state = await call.relayStates.verify(requestState, { method, name: called, keyId: call.parent.principal.keyId, org: call.parent.principal.org });
    relay.inputResponses = inputResponses as Record<string, unknown> | undefined;
    relay.upstreamState = state.upstreamState;
    relay.boundServerId = state.serverId;
  }
  return relay;
}

/**
 * The requests of every HTTP request in progress, by key and JSON-RPC id, so that a client's
 * `notifications/cancelled` (sent in another HTTP request: the endpoint is stateless) stops the one it
 * names, and the upstream is told in turn. Ids are counted by each client, and several clients may share
 * a key: an id two requests of one key have in flight names neither, and is left alone.
 */
class InFlightRequests {
  private readonly requests = new Map<string, ChildSignal[]>();

  track(caller: string, message: unknown, controller: ChildSignal): (() => void) | undefined {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' && typeof id !== 'number') return undefined;
    const slot = slotOf(caller, id);
    const list = this.requests.get(slot) ?? [];
    list.push(controller);
    this.requests.set(slot, list);
    return () => {
      const left = (this.requests.get(slot) ?? []).filter((c) => c !== controller);
      if (left.length > 0) this.requests.set(slot, left);
      else this.requests.delete(slot);
    };
  }

  cancel(caller: string, id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const list = this.requests.get(slotOf(caller, id));
    if (list?.length === 1) list[0].abort();
  }
}

/** `1` and `"1"` are different ids */
const slotOf = (caller: string, id: string | number) => JSON.stringify([caller, id]);

/** A config key's id is its organisation's only: another organisation's `bot` must not cancel this one's calls. */
const callerOf = (principal: { keyId: string; org: string | null }) => orgKeyId(principal.org, principal.keyId);

/**
 * The response as an event stream, opened at the first progress notification of a client that reads
 * SSE: progress then goes out as it arrives, and the answers follow when they are ready.
 */
class ProgressStream {
  opened = false;
  constructor(
    private readonly res: ServerResponse,
    readonly enabled: boolean,
  ) {}

  progress(token: string | number, update: ProgressUpdate): void {
    if (!this.enabled || this.res.writableEnded) return;
    // Progress is advisory and each notification says where the call stands: while the client is not
    // taking what was written, the next ones are left out. Kept, an upstream reporting as fast as it likes
    // to a client that stops reading had the gateway hold every notification in memory for as long as the
    // call ran (up to mcp.maxCallSeconds), for every organisation's requests to share.
    if (this.opened && this.res.writableNeedDrain) return;
    const params: Record<string, unknown> = { progressToken: token, progress: update.progress };
    if (update.total !== undefined) params.total = update.total;
    if (update.message !== undefined) params.message = update.message;
    this.write({ jsonrpc: '2.0', method: 'notifications/progress', params });
  }

  write(message: unknown): void {
    if (!this.opened) {
      this.res.writeHead(200, EVENT_STREAM_HEADERS);
      this.opened = true;
    }
    this.res.write(sseFrame(message));
  }
}

function rpcError(id: RpcId, err: GatewayError, call?: CallContext) {
  if (err.status === 500) call?.services.logger.error('mcp request failed', { requestId: requestIdOf(call.res), error: (err.cause as Error | undefined)?.message ?? err.message });
  return jsonRpcErrorBody(id, err);
}

function rpcErrorRaw(id: RpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function invalid(id: RpcId, why: string) {
  return rpcErrorRaw(id, JSONRPC.INVALID_REQUEST, `Invalid Request: ${why}.`);
}

/** answered with HTTP 400: not JSON-RPC at all, or a revision we do not serve (2026-07-28's codes) */
const HTTP_400_CODES = new Set<number>([JSONRPC.INVALID_REQUEST, -32022, -32020]);

function isInvalid(body: unknown): boolean {
  return HTTP_400_CODES.has((body as { error?: { code?: number } })?.error?.code as number);
}

/** The seconds a budget or rate-limit refusal asks the client to wait (render.ts `data.retryAfter`). */
function limitPause(body: unknown): number | undefined {
  const error = (body as { error?: { code?: unknown; data?: { retryAfter?: unknown } } })?.error;
  return error?.code === JSONRPC.LIMIT_EXCEEDED && typeof error.data?.retryAfter === 'number' ? error.data.retryAfter : undefined;
}

function requireStringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw new GatewayError(400, 'invalid_request_error', 'invalid_params', `params.${name} must be a non-empty string.`, { param: name });
  return value;
}

function idOf(message: unknown): RpcId {
  const id = (message as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The key: `x-gateway-api-key` when it is sent (it wins, even over a valid Bearer token: a client that
 * sets it means it), else `Authorization: Bearer <key>`, the one header many MCP clients can set.
 */
function mcpKey(headers: IncomingHttpHeaders): string | undefined {
  const gatewayHeader = headers['x-gateway-api-key'];
  if (typeof gatewayHeader === 'string' && gatewayHeader.trim() !== '') return gatewayKey(gatewayHeader);
  return bearerToken(headers.authorization);
}

/** `x-gateway-api-key: Bearer <key>` (the bare key is accepted too). */
function gatewayKey(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return bearerToken(value) ?? (/^\S+$/.test(value.trim()) && !/^bearer$/i.test(value.trim()) ? value.trim() : undefined);
}

/**
 * JSON when the client accepts it (or says nothing), SSE when it prefers an event stream or accepts only
 * that. Each type's weight is that of the most specific range naming it (RFC 9110 §12.5.1): `q=0` refuses.
 */
function negotiate(accept: string | undefined): 'json' | 'sse' | undefined {
  if (!accept || accept.trim() === '') return 'json';
  const ranges = mediaRanges(accept);
  const json = weightOf(ranges, 'application', 'json');
  const sse = weightOf(ranges, 'text', 'event-stream');
  if (json > 0 && json >= sse) return 'json';
  if (sse > 0) return 'sse';
  return undefined;
}

/** The client reads an event stream (SDK clients accept both JSON and SSE). */
function acceptsEventStream(accept: string | undefined): boolean {
  return !!accept && mediaRanges(accept).some((r) => r.range === 'text/event-stream' && r.q > 0);
}

interface MediaRange {
  range: string;
  q: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').map((part) => {
    const [range, ...params] = part.split(';');
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((s) => s.trim());
      if (name.toLowerCase() === 'q') {
        const n = Number(value);
        // an unreadable weight counts as the default rather than as a refusal
        if (value !== '' && Number.isFinite(n)) q = Math.min(1, Math.max(0, n));
      }
    }
    return { range: range.trim().toLowerCase(), q };
  });
}

/** the weight of the most specific range that names `type/subtype`; 0 when none does */
function weightOf(ranges: MediaRange[], type: string, subtype: string): number {
  for (const name of [`${type}/${subtype}`, `${type}/*`, '*/*']) {
    const named = ranges.filter((r) => r.range === name);
    if (named.length > 0) return Math.max(...named.map((r) => r.q));
  }
  return 0;
}

function paramHeadersOf(headers: IncomingHttpHeaders): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith('mcp-param-') && typeof value === 'string') params.set(name.slice('mcp-param-'.length), value);
  }
  return params;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const sseFrame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/** A refusal of how the message is put, in the form the client reads: a client that accepts only SSE gets an event. */
function writeAccepted(res: ServerResponse, status: number, payload: unknown, accept: 'json' | 'sse'): void {
  if (accept === 'json') return writeJson(res, status, payload);
  res.writeHead(status, EVENT_STREAM_HEADERS).end(sseFrame(payload));
}

function writeJson(res: ServerResponse, status: number, payload: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(payload));
}
