import type { Router } from 'express';
import { roundCost } from '../../spend/pricing';
import { GatewayError, InvalidRequestError, NotFoundError, PermissionError } from '../../errors/gateway-error';
import type { StoredKey } from '../../auth/key-registry';
import { keyReferenceProblems } from '../../config/references';
import { READ_ONLY_FIELDS } from '../../config/schema';
import type { KeyCreateBody, KeyPatchBody, OrganizationConfig, OrganizationPatchBody } from '../../config/types';
import { validators } from '../../config/validators';
import { MCP_GATEWAY, type McpGateway } from '../mcp/mcp-gateway';
import { isVisibleTo } from '../mcp/scope';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { Admission } from '../../limits/admission';
import { ADMISSION } from '../../plugins/tokens';
import type { GatewayServices } from '../../http/gateway-services';
import { validateBody, validatePatch } from '../../http/validate';
import { optionalString, parseCursor, parseLimit, parseRange, parseStatus } from './query-params';
import { isJsonObject } from '../../types/json-object';

const SPEND_GROUPS = new Set(['key', 'org', 'model', 'day']);

/**
 * The config file's organisations, then the stored ones it does not declare. An organisation created
 * here and later written into the file is the file's (its limits are the ones enforced): the stored copy
 * was listed beside it, with a budget nothing checked.
 */
export function withConfigOrganizations(fromConfig: readonly OrganizationConfig[], stored: OrganizationConfig[]): OrganizationConfig[] {
  const declared = new Set(fromConfig.map((o) => o.id));
  return [...fromConfig, ...stored.filter((o) => !declared.has(o.id))];
}

/** A key as the API shows it: never the secret, never its digest. */
function publicKey(k: StoredKey) {
  const { digest: _digest, ...rest } = k;
  return { object: 'key', ...rest };
}

export function installAdminRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const orgs = services.store.collection<OrganizationConfig>('organizations');

  router.get(
    '/admin/v1/logs',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      const page = await services.requestLog.query({
        key: optionalString(req.query.key, 'key'),
        org: orgFilter(admin, req.query.org),
        model: optionalString(req.query.model, 'model'),
        ...parseRange(req.query),
        ...parseStatus(req.query.status),
        limit: parseLimit(req.query.limit),
        cursor: parseCursor(req.query.cursor),
      });
      res.json({ object: 'list', data: page.data, next_cursor: page.nextCursor, has_more: page.nextCursor !== null });
    }),
  );

  // one entry with every recorded field; another organisation's entry answers like a missing one
  router.get(
    '/admin/v1/logs/:id',
    auth,
    adminHandler(async (req, res) => {
      const id = String(req.params.id);
      const page = await services.requestLog.query({ id, org: orgFilter(adminOf(res), undefined), limit: 1 });
      if (!page.data.length) throw new NotFoundError(`No log entry "${id}".`, 'log_entry_not_found');
      res.json({ object: 'log_entry', ...page.data[0] });
    }),
  );

  router.get(
    '/admin/v1/spend',
    auth,
    adminHandler(async (req, res) => {
      const groupBy = String(req.query.groupBy ?? 'key');
      if (!SPEND_GROUPS.has(groupBy)) throw new InvalidRequestError('groupBy must be one of key, org, model, day.', 'invalid_value', { param: 'groupBy' });
      const { since, until } = parseRange(req.query);
      const rows = await services.requestLog.spend(groupBy as 'key', since, orgFilter(adminOf(res), req.query.org), until);
      const total = rows.reduce((sum, r) => sum + r.cost, 0);
      res.json({ object: 'list', group_by: groupBy, data: rows, total_cost: roundCost(total) });
    }),
  );

  /** Admission caches organisations: without this a changed limit held only once the copy expired. */
  async function organizationChanged(id: string): Promise<void> {
    if (!services.container.isRegistered(ADMISSION, true)) return;
    await services.container.resolve<Admission>(ADMISSION).organizationChanged?.(id);
  }

  async function allOrgs(): Promise<OrganizationConfig[]> {
    return withConfigOrganizations(services.config.organizations, await orgs.all());
  }

  router.get(
    '/admin/v1/organizations',
    auth,
    adminHandler(async (_req, res) => {
      const admin = adminOf(res);
      const list = (await allOrgs()).filter((o) => admin.role === 'platform_admin' || o.id === admin.org);
      res.json({ object: 'list', data: list });
    }),
  );

  router.post(
    '/admin/v1/organizations',
    auth,
    adminHandler(async (req, res) => {
      if (adminOf(res).role !== 'platform_admin') throw new PermissionError('Only the platform admin can create organizations.', 'not_platform_admin');
      // the config file's organization schema: the API cannot store what the file would refuse
      const body = validateBody<OrganizationConfig>(validators.organizationCreate, req.body);
      const id = body.id;
      // a conflict, as a second MCP server of one name is: a script tells "already there" from a bad body by the status
      if ((await allOrgs()).some((o) => o.id === id)) throw new GatewayError(409, 'invalid_request_error', 'already_exists', `Organization "${id}" already exists.`, { param: 'id' });
      const org: OrganizationConfig = { ...body, name: body.name ?? id };
      await orgs.set(id, org);
      await organizationChanged(id);
      res.status(201).json(org);
    }),
  );

  router.patch(
    '/admin/v1/organizations/:id',
    auth,
    adminHandler(async (req, res) => {
      if (adminOf(res).role !== 'platform_admin') throw new PermissionError('Only the platform admin can change organizations.', 'not_platform_admin');
      const id = String(req.params.id);
      if (services.config.organizations.some((o) => o.id === id)) throw new InvalidRequestError('This organization is defined in the config file; change it there.', 'config_organization_read_only');
      const existing = await orgs.get(id);
      if (!existing) throw new NotFoundError(`No organization "${id}".`, 'organization_not_found');
      const patch = validatePatch<OrganizationPatchBody>(validators.organizationPatch, req.body, READ_ONLY_FIELDS.organization);
      const org: OrganizationConfig = { ...existing, ...patch.set };
      for (const field of patch.clear) delete (org as Record<string, unknown>)[field];
      await orgs.set(id, org);
      await organizationChanged(id);
      res.json(org);
    }),
  );

  /**
   * A key's organisation, guardrails and MCP servers must exist, as in the config file. The servers are
   * those the key's organisation `org` can see: another organisation's private server is unknown here as
   * everywhere, or an organisation admin could tell which names it has.
   */
  async function checkKeyReferences(body: KeyCreateBody | KeyPatchBody, org: string): Promise<void> {
    const mcp = services.container.resolve<McpGateway>(MCP_GATEWAY);
    const problems = keyReferenceProblems(body as Record<string, unknown>, {
      orgs: new Set((await allOrgs()).map((o) => o.id)),
      guardrails: new Set(services.config.guardrails.map((g) => g.id)),
      servers: new Set(mcp.registry.list().filter((r) => isVisibleTo(r, org)).flatMap((r) => [r.name, r.alias])),
    });
    const first = problems[0];
    if (first) throw new InvalidRequestError(problems.map((p) => p.message).join('; '), first.path === 'org' ? 'unknown_organization' : 'unknown_reference', { param: first.path });
  }

  /**
   * A key PATCH body without its `mcp.servers: null` and `mcp.tools.<server>: null` entries, and what they
   * named: as the merge keeps the lists a patch does not name, a null is the only way to take the server
   * list away (every server) or one server's tool list (every tool of it) while keeping the rest of `mcp`.
   */
  function withoutUnlistedMcp(raw: unknown): { body: unknown; unlisted: Set<string>; allServers: boolean } {
    const unlisted = new Set<string>();
    if (!isJsonObject(raw) || !Object.hasOwn(raw, 'mcp') || !isJsonObject(raw.mcp)) return { body: raw, unlisted, allServers: false };
    const allServers = Object.hasOwn(raw.mcp, 'servers') && raw.mcp.servers === null;
    const { servers: _servers, ...withoutServers } = raw.mcp;
    const mcp = allServers ? withoutServers : raw.mcp;
    if (!Object.hasOwn(mcp, 'tools') || !isJsonObject(mcp.tools)) return { body: allServers ? { ...raw, mcp } : raw, unlisted, allServers };
    const lists: [string, unknown][] = [];
    for (const [server, list] of Object.entries(mcp.tools)) {
      if (list === null) unlisted.add(server);
      else lists.push([server, list]);
    }
    if (!unlisted.size) return { body: allServers ? { ...raw, mcp } : raw, unlisted, allServers };
    // spread and fromEntries define the client's names as fields: a "__proto__" stays a server name
    return { body: { ...raw, mcp: { ...mcp, tools: Object.fromEntries(lists) } }, unlisted, allServers };
  }

  /**
   * A key's `mcp` without what restricts nothing: an empty tool map is no tool list, and an `mcp` with no
   * list left is no `mcp` (every server, every tool), shown and stored as after `mcp: null`. Kept, a
   * `{"tools": {}}` was listed as a restriction (the console's MCP column blank instead of "all").
   */
  function withoutEmptyMcp<T extends { mcp?: KeyPatchBody['mcp'] }>(key: T): T {
    if (!key.mcp) return key;
    const { tools, ...rest } = key.mcp;
    const hasTools = !!tools && Object.keys(tools).length > 0;
    if (rest.servers || hasTools) return { ...key, mcp: hasTools ? { ...rest, tools } : rest };
    const { mcp: _mcp, ...withoutMcp } = key;
    return withoutMcp as T;
  }

  /** `org` picks among config keys of one declared id: two organisations may each declare a `bot`. */
  async function findKey(id: string, org: string | undefined): Promise<StoredKey | undefined> {
    const inOrg = (k: StoredKey) => org === undefined || k.org === org;
    const stored = await services.keys.collection.get(id);
    // a revoked key is only a tombstone that keeps its id from being reused
    const found = [...services.keys.configKeys().filter((k) => k.id === id), ...(stored ? [stored] : [])].filter((k) => !k.revoked && inOrg(k));
    // taking the first organisation's would read, change or revoke a key the platform admin did not mean
    if (found.length > 1) {
      throw new InvalidRequestError(`Several organizations have a key "${id}": name one with ?org=.`, 'missing_required_parameter', { param: 'org' });
    }
    return found[0];
  }

  function visibleTo(admin: ReturnType<typeof adminOf>, key: StoredKey): boolean {
    return admin.role === 'platform_admin' || key.org === admin.org;
  }

  /**
   * A key the admin may see; any other answers exactly like a key that does not exist. An organisation
   * admin's `bot` is its own organisation's; the platform admin names the organisation with `?org=`.
   */
  async function visibleKey(id: string, admin: ReturnType<typeof adminOf>, rawOrg: unknown): Promise<StoredKey> {
    const key = await findKey(id, orgFilter(admin, rawOrg));
    if (!key || !visibleTo(admin, key)) throw new NotFoundError(`No key "${id}".`, 'key_not_found');
    return key;
  }

  router.get(
    '/admin/v1/keys',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      // `?org=` as on the other reads: an organisation admin naming another is refused, not answered with its own
      const org = orgFilter(admin, req.query.org);
      const keys = [...services.keys.configKeys(), ...(await services.keys.collection.all())].filter((k) => !k.revoked && visibleTo(admin, k) && (org === undefined || k.org === org));
      res.json({ object: 'list', data: keys.map(publicKey) });
    }),
  );

  router.post(
    '/admin/v1/keys',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      // ids are generated, never chosen: a chosen id could claim a revoked key's, or probe other organisations'
      if (typeof req.body === 'object' && req.body !== null && Object.hasOwn(req.body, 'id')) {
        throw new InvalidRequestError("'id' cannot be set: the gateway generates key ids (use 'name' for your own label).", 'invalid_field', { param: 'id' });
      }
      // the config file's key schema, without the secret and the id (the gateway makes both)
      const body = validateBody<KeyCreateBody>(validators.keyCreate, req.body);
      if (admin.role === 'platform_admin' && body.org === undefined) throw new InvalidRequestError("Missing required parameter: 'org'.", 'missing_required_parameter', { param: 'org' });
      if (admin.role !== 'platform_admin' && body.org !== undefined && body.org !== admin.org) throw new PermissionError('An organization admin can only create keys in its own organization.', 'cross_org_denied');
      const input = withoutEmptyMcp({ ...body, org: body.org ?? (admin.org as string) });
      await checkKeyReferences(input, input.org);
      const { key, secret } = await services.keys.create(input);
      // The secret is shown this once; only its digest is stored.
      res.status(201).json({ ...publicKey(key), key: secret });
    }),
  );

  router.get(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res), req.query.org);
      res.json(publicKey(key));
    }),
  );

  router.patch(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res), req.query.org);
      if (key.source === 'config') throw new InvalidRequestError('This key is defined in the config file; change it there.', 'config_key_read_only');
      // `null` removes a field: no budget, no rate limit, every model
      const { body, unlisted, allServers } = withoutUnlistedMcp(req.body);
      const patch = validatePatch<KeyPatchBody>(validators.keyPatch, body, READ_ONLY_FIELDS.key);
      await checkKeyReferences(patch.set, key.org);
      const updated = { ...key, ...patch.set } as StoredKey;
      // `mcp` only narrows what it names: replaced whole, a patch of its tools dropped `servers` (every
      // server for the key) and a patch of one server's tools dropped the others' lists (every tool of them)
      if (patch.set.mcp && key.mcp) {
        const tools = key.mcp.tools || patch.set.mcp.tools ? { tools: { ...key.mcp.tools, ...patch.set.mcp.tools } } : {};
        updated.mcp = { ...key.mcp, ...patch.set.mcp, ...tools };
      }
      if (unlisted.size && updated.mcp?.tools) {
        const { tools, ...rest } = updated.mcp;
        updated.mcp = { ...rest, tools: Object.fromEntries(Object.entries(tools).filter(([server]) => !unlisted.has(server))) };
      }
      if (allServers && updated.mcp) {
        const { servers: _servers, ...rest } = updated.mcp;
        updated.mcp = rest;
      }
      for (const field of patch.clear) delete (updated as unknown as Record<string, unknown>)[field];
      const saved = withoutEmptyMcp(updated);
      await services.keys.update(saved);
      res.json(publicKey(saved));
    }),
  );

  router.delete(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res), req.query.org);
      if (key.source === 'config') throw new InvalidRequestError('This key is defined in the config file; remove it there.', 'config_key_read_only');
      await services.keys.revoke(key);
      res.json({ id: key.id, object: 'key', deleted: true });
    }),
  );
}
