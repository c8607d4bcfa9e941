/**
 * The MCP tool tester: `POST /admin/v1/mcp/servers/{id}/tools/{tool}/call` with `{ key, arguments }`.
 *
 * The gateway calls its own `POST /mcp` over loopback with the key the operator pasted, exactly as a client
 * would: `tools/list` to find the tool's name as that key sees it (`<alias>-<tool>`, or bare), then
 * `tools/call`. So the call runs the whole pipeline (auth, scope, guardrails, spend, log) under that key's
 * rules, and the answer carries the JSON-RPC result and the log entry the call made. The key is used for
 * those two requests only: never stored, logged or echoed. (Going over HTTP rather than calling the
 * pipeline in-process keeps the tester honest: it sees what any MCP client would.)
 */
import type { Request, Router } from 'express';
import { InvalidRequestError, NotFoundError } from '../../errors/gateway-error';
import { MCP_GATEWAY, type McpGateway } from '../mcp/mcp-gateway';
import { prefixedToolName } from '../mcp/naming';
import { toolState } from '../mcp/tool-states';
import type { RegistryActor } from '../mcp/server-registry';
import type { LogEntry } from '../../store/log-entry';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';
import { requireObjectBody, requireString } from '../../http/validate';

/** what a key can hold: visible ASCII, as a header value carries it */
const KEY_CHARACTERS = /^[\x21-\x7e]+$/;

/** the log is written just after the answer: wait this long for the entry */
const LOG_WAIT_MS = 2_000;

/** This gateway's own listener, as the admin request reached it. */
function selfUrl(req: Request): string {
  const local = req.socket.localAddress ?? '127.0.0.1';
  const host = local.startsWith('::ffff:') ? local.slice(7) : local;
  return `http://${host.includes(':') ? `[${host}]` : host}:${req.socket.localPort}`;
}

async function rpc(base: string, key: string, method: string, params: unknown) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  let body: { result?: unknown; error?: { code: number; message: string } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, requestId: res.headers.get('x-gateway-request-id'), body };
}

export function installAdminToolTesterRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const mcp = services.container.resolve<McpGateway>(MCP_GATEWAY);

  router.post(
    '/admin/v1/mcp/servers/:id/tools/:tool/call',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      const actor: RegistryActor = { platformAdmin: admin.role === 'platform_admin', org: admin.role === 'platform_admin' ? null : admin.org };
      const server = mcp.registry.getFor(actor, String(req.params.id));
      const tool = String(req.params.tool);
      const state = toolState(server, tool);
      if (!state?.present) throw new NotFoundError(`MCP server "${server.name}" has no tool "${tool}".`, 'tool_not_found');
      const body = requireObjectBody(req.body);
      const key = requireString(body, 'key');
      // the key travels in a header: a line break or a character beyond ASCII could not be sent (fetch throws)
      if (!KEY_CHARACTERS.test(key)) throw new InvalidRequestError('The test key was not accepted by /mcp: a key is printable ASCII with no spaces.', 'invalid_test_key', { param: 'key' });
      const args = body.arguments ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new InvalidRequestError('arguments must be a JSON object.', 'invalid_value', { param: 'arguments' });

      const base = selfUrl(req);
      const listed = await rpc(base, key, 'tools/list', {});
      if (listed.status === 401) throw new InvalidRequestError('The test key was not accepted by /mcp (missing, wrong or revoked).', 'invalid_test_key', { param: 'key' });
      const names = new Set(((listed.body?.result as { tools?: { name: string }[] })?.tools ?? []).map((t) => t.name));
      // A key that reaches one server alone sees its tools without the alias, so a bare name may be a tool
      // of the same name on another server: a name is this tool's only if the key's own scope routes it here.
      const principal = await services.auth.principalOf(key);
      const scope = principal && mcp.scope({ keyId: principal.keyId, org: principal.org, restrictions: principal.mcp, allowsModel: (m) => principal.allowsModel(m) }, {});
      const routesHere = (n: string) => {
        try {
          return scope !== undefined && mcp.routeTool(scope, n).server.id === server.id;
        } catch {
          return false;
        }
      };
      const name = [prefixedToolName(server.alias, tool), tool].find((n) => names.has(n) && routesHere(n));
      if (!name) {
        const why = state.status !== 'enabled' ? 'the tool is hidden; enable it first' : 'the key may not use this server or tool';
        throw new InvalidRequestError(`The test key does not see tool "${tool}" of "${server.name}" on /mcp: ${why}.`, 'tool_not_visible', { param: 'key' });
      }

      const called = await rpc(base, key, 'tools/call', { name, arguments: args });
      // the entry is visible to this admin only if the key is in its organisation
      let entry: LogEntry | null = null;
      const org = orgFilter(admin, undefined);
      for (const until = Date.now() + LOG_WAIT_MS; called.requestId && !entry && Date.now() < until; ) {
        entry = (await services.requestLog.query({ id: called.requestId, org, limit: 1 })).data[0] ?? null;
        if (!entry) await new Promise((r) => setTimeout(r, 50));
      }
      res.json({
        object: 'tool_test',
        server: server.name,
        tool: name,
        status: called.status,
        request_id: called.requestId,
        result: called.body?.result ?? null,
        error: called.body?.error ?? null,
        log_entry: entry,
      });
    }),
  );
}
