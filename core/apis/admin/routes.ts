import type { Router } from 'express';
import { InvalidRequestError, NotFoundError, PermissionError } from '../../errors/gateway-error';
import type { StoredKey } from '../../auth/key-registry';
import type { OrganizationConfig } from '../../config/types';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';
import { requireObjectBody, requireString } from '../../http/validate';

const SPEND_GROUPS = new Set(['key', 'org', 'model', 'day']);
const KEY_FIELDS = ['name', 'role', 'models', 'mcp', 'maxBudget', 'budgetDuration', 'rpm', 'tpm', 'guardrails'] as const;

/** Keys may be created or changed to these roles only: a stored 'platform_admin' role would open every organisation. */
function checkRole(body: Record<string, unknown>): void {
  if (body.role !== undefined && body.role !== 'member' && body.role !== 'admin') throw new InvalidRequestError("role must be 'member' or 'admin'.", 'invalid_value', { param: 'role' });
}

/** A key as the API shows it: never the secret, never its digest. */
function publicKey(k: StoredKey) {
  const { digest: _digest, ...rest } = k;
  return { object: 'key', ...rest };
}

function parseLimit(raw: unknown): number {
  if (raw === undefined) return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidRequestError('limit must be an integer from 1 to 1000.', 'invalid_value', { param: 'limit' });
  return n;
}

function parseSince(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const t = Date.parse(String(raw));
  if (Number.isNaN(t)) throw new InvalidRequestError('since must be an ISO-8601 date or time.', 'invalid_value', { param: 'since' });
  return new Date(t).toISOString();
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
        key: typeof req.query.key === 'string' ? req.query.key : undefined,
        org: orgFilter(admin, req.query.org),
        model: typeof req.query.model === 'string' ? req.query.model : undefined,
        since: parseSince(req.query.since),
        limit: parseLimit(req.query.limit),
        cursor: typeof req.query.cursor === 'string' && req.query.cursor ? req.query.cursor : undefined,
      });
      res.json({ object: 'list', data: page.data, next_cursor: page.nextCursor, has_more: page.nextCursor !== null });
    }),
  );

  router.get(
    '/admin/v1/spend',
    auth,
    adminHandler(async (req, res) => {
      const groupBy = String(req.query.groupBy ?? 'key');
      if (!SPEND_GROUPS.has(groupBy)) throw new InvalidRequestError('groupBy must be one of key, org, model, day.', 'invalid_value', { param: 'groupBy' });
      const rows = await services.requestLog.spend(groupBy as 'key', parseSince(req.query.since), orgFilter(adminOf(res), req.query.org));
      const total = rows.reduce((sum, r) => sum + r.cost, 0);
      res.json({ object: 'list', group_by: groupBy, data: rows, total_cost: total });
    }),
  );

  async function allOrgs(): Promise<OrganizationConfig[]> {
    return [...services.config.organizations, ...(await orgs.all())];
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
      const body = requireObjectBody(req.body);
      const id = requireString(body, 'id');
      if ((await allOrgs()).some((o) => o.id === id)) throw new InvalidRequestError(`Organization "${id}" already exists.`, 'already_exists', { param: 'id' });
      const org: OrganizationConfig = { id, name: typeof body.name === 'string' ? body.name : id };
      for (const f of ['maxBudget', 'rpm', 'tpm', 'budgetDuration'] as const) if (body[f] !== undefined) (org as unknown as Record<string, unknown>)[f] = body[f];
      await orgs.set(id, org);
      res.status(201).json(org);
    }),
  );

  async function findKey(id: string): Promise<StoredKey | undefined> {
    const key = services.keys.configKeys().find((k) => k.id === id) ?? (await services.keys.collection.get(id));
    // a revoked key is only a tombstone that keeps its id from being reused
    return key?.revoked ? undefined : key;
  }

  function visibleTo(admin: ReturnType<typeof adminOf>, key: StoredKey): boolean {
    return admin.role === 'platform_admin' || key.org === admin.org;
  }

  /** A key the admin may see; any other answers exactly like a key that does not exist. */
  async function visibleKey(id: string, admin: ReturnType<typeof adminOf>): Promise<StoredKey> {
    const key = await findKey(id);
    if (!key || !visibleTo(admin, key)) throw new NotFoundError(`No key "${id}".`, 'key_not_found');
    return key;
  }

  router.get(
    '/admin/v1/keys',
    auth,
    adminHandler(async (_req, res) => {
      const admin = adminOf(res);
      const keys = [...services.keys.configKeys(), ...(await services.keys.collection.all())].filter((k) => !k.revoked && visibleTo(admin, k));
      res.json({ object: 'list', data: keys.map(publicKey) });
    }),
  );

  router.post(
    '/admin/v1/keys',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      const body = requireObjectBody(req.body);
      const org = admin.role === 'platform_admin' ? requireString(body, 'org') : (admin.org as string);
      if (admin.role !== 'platform_admin' && body.org !== undefined && body.org !== admin.org) throw new PermissionError('An organization admin can only create keys in its own organization.', 'cross_org_denied');
      if (!(await allOrgs()).some((o) => o.id === org)) throw new InvalidRequestError(`Unknown organization "${org}".`, 'unknown_organization', { param: 'org' });
      // ids are generated, never chosen: a chosen id could claim a revoked key's, or probe other organisations'
      if (body.id !== undefined) throw new InvalidRequestError("'id' cannot be set: the gateway generates key ids (use 'name' for your own label).", 'invalid_field', { param: 'id' });
      checkRole(body);
      const input: Record<string, unknown> = { org };
      for (const f of KEY_FIELDS) if (body[f] !== undefined) input[f] = body[f];
      const { key, secret } = await services.keys.create(input as never);
      // The secret is shown this once; only its digest is stored.
      res.status(201).json({ ...publicKey(key), key: secret });
    }),
  );

  router.get(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res));
      res.json(publicKey(key));
    }),
  );

  router.patch(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res));
      if (key.source === 'config') throw new InvalidRequestError('This key is defined in the config file; change it there.', 'config_key_read_only');
      const body = requireObjectBody(req.body);
      for (const f of Object.keys(body)) if (!(KEY_FIELDS as readonly string[]).includes(f)) throw new InvalidRequestError(`Unknown or read-only field '${f}'.`, 'invalid_field', { param: f });
      checkRole(body);
      const updated = { ...key, ...body } as StoredKey;
      await services.keys.update(updated);
      res.json(publicKey(updated));
    }),
  );

  router.delete(
    '/admin/v1/keys/:id',
    auth,
    adminHandler(async (req, res) => {
      const key = await visibleKey(String(req.params.id), adminOf(res));
      if (key.source === 'config') throw new InvalidRequestError('This key is defined in the config file; remove it there.', 'config_key_read_only');
      await services.keys.revoke(key);
      res.json({ id: key.id, object: 'key', deleted: true });
    }),
  );
}
