/**
 * Management API for MCP servers (contracts.md §3), authenticated with the admin key (every organisation)
 * or an organisation admin's key (its own organisation only; another organisation's server answers 404,
 * exactly like a missing one). Reads never show a credential or a static header value.
 *
 *   GET    /admin/v1/mcp/servers[?org=]                       list
 *   POST   /admin/v1/mcp/servers                              register (then discover, capped)
 *   GET    /admin/v1/mcp/servers/{id}                         read: health, tools enabled/hidden, notices
 *   PATCH  /admin/v1/mcp/servers/{id}                         update (then rediscover)
 *   DELETE /admin/v1/mcp/servers/{id}                         remove
 *   POST   /admin/v1/mcp/servers/{id}/tools/{tool}/enable     enable a tool (accepts its current definition)
 *   POST   /admin/v1/mcp/servers/{id}/tools/{tool}/disable    hide a tool
 *   POST   /admin/v1/mcp/servers/{id}/health                  check now and rediscover
 *
 * `{id}` is the server id, or its name within the caller's organisation (platform-owned servers by name
 * for the admin key).
 */
import type { Response, Router } from 'express';
import type { Principal } from '../../auth/principal';
import { InvalidRequestError } from '../../errors/gateway-error';
import { droppedMessage } from '../mcp/credential-binding';
import { MCP_GATEWAY, type McpGateway } from '../mcp/mcp-gateway';
import { toPublicView } from '../mcp/server-record';
import type { RegistryActor } from '../mcp/server-registry';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';
import type { McpServerCreateBody, McpServerPatchBody } from '../../config/types';
import { validators } from '../../config/validators';
import { validateBody, validatePatch } from '../../http/validate';

const BASE = '/admin/v1/mcp/servers';

/** fields a PATCH may remove with `null`: the alias goes back to the name's */
const REMOVABLE = new Set(['alias', 'description', 'pricePerCall', 'toolPrices']);

function actorOf(res: Response): RegistryActor {
  const admin: Principal = adminOf(res);
  return { platformAdmin: admin.role === 'platform_admin', org: admin.role === 'platform_admin' ? null : admin.org };
}

const view = (record: Parameters<typeof toPublicView>[0]) => ({ object: 'mcp_server', ...toPublicView(record) });

export function installAdminMcpRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const mcp = services.container.resolve<McpGateway>(MCP_GATEWAY);

  router.get(
    BASE,
    auth,
    adminHandler(async (req, res) => {
      // `?org=` narrows the platform admin's list; an organisation admin may only name its own
      const org = orgFilter(adminOf(res), req.query.org);
      const records = mcp.registry.listFor(actorOf(res)).filter((r) => org === undefined || r.org === org);
      res.json({ object: 'list', data: records.map(view) });
    }),
  );

  router.post(
    BASE,
    auth,
    adminHandler(async (req, res) => {
      // the config file's server schema (secrets as plain strings); the registry adds ownership, egress and uniqueness
      const body = validateBody<McpServerCreateBody>(validators.mcpServerCreate, req.body);
      const record = await mcp.registry.register(actorOf(res), body);
      const checked = (await mcp.health.check(record.id)) ?? record;
      res.status(201).json(view(checked));
    }),
  );

  router.get(
    `${BASE}/:id`,
    auth,
    adminHandler(async (req, res) => {
      res.json(view(mcp.registry.getFor(actorOf(res), String(req.params.id))));
    }),
  );

  router.patch(
    `${BASE}/:id`,
    auth,
    adminHandler(async (req, res) => {
      // `null` removes an optional field, as on a key's PATCH: without it a price or a description, once
      // set, could only be overwritten (the console's emptied field was left out and kept behind "Saved")
      const { set: body, clear } = validatePatch<McpServerPatchBody>(validators.mcpServerPatch, req.body);
      const kept = clear.find((field) => !REMOVABLE.has(field));
      if (kept) throw new InvalidRequestError(`${kept}: cannot be removed (null is for ${[...REMOVABLE].join(', ')})`, 'invalid_value', { param: kept });
      const { record, droppedSecrets } = await mcp.registry.update(actorOf(res), String(req.params.id), body, clear);
      const checked = (await mcp.health.check(record.id)) ?? record;
      // credentials are bound to their origin: say when a URL change dropped them (credential-binding.ts)
      const dropped = droppedSecrets.length > 0 ? { credentialsDropped: true, droppedCredentials: droppedSecrets, message: droppedMessage(droppedSecrets) } : { credentialsDropped: false };
      res.json({ ...view(checked), ...dropped });
    }),
  );

  router.delete(
    `${BASE}/:id`,
    auth,
    adminHandler(async (req, res) => {
      const removed = await mcp.registry.remove(actorOf(res), String(req.params.id));
      mcp.cache.delete(removed.id);
      res.json({ object: 'mcp_server', id: removed.id, name: removed.name, deleted: true });
    }),
  );

  for (const action of ['enable', 'disable'] as const) {
    router.post(
      `${BASE}/:id/tools/:tool/${action}`,
      auth,
      adminHandler(async (req, res) => {
        const record = await mcp.registry.setToolEnabled(actorOf(res), String(req.params.id), String(req.params.tool), action === 'enable');
        res.json(view(record));
      }),
    );
  }

  router.post(
    `${BASE}/:id/health`,
    auth,
    adminHandler(async (req, res) => {
      const record = mcp.registry.getFor(actorOf(res), String(req.params.id));
      res.json(view((await mcp.health.check(record.id)) ?? record));
    }),
  );
}
