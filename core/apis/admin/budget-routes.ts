import type { Router } from 'express';
import type { StoredKey } from '../../auth/key-registry';
import type { OrganizationConfig } from '../../config/types';
import type { Admission } from '../../limits/admission';
import { keySubjectId } from '../../limits/limit-subjects';
import { ADMISSION } from '../../plugins/tokens';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import { withConfigOrganizations } from './routes';
import type { GatewayServices } from '../../http/gateway-services';

/**
 * `GET /admin/v1/budgets`: every key and organisation with a budget that the admin may see, with what it
 * has used in the current period: the same counter the gateway checks before each request (settled costs
 * plus the estimates of requests still running), so it is what "budget exceeded" is decided on.
 */
export function installAdminBudgetRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const orgs = services.store.collection<OrganizationConfig>('organizations');

  router.get(
    '/admin/v1/budgets',
    auth,
    adminHandler(async (req, res) => {
      const admin = adminOf(res);
      const admission = services.container.isRegistered(ADMISSION, true) ? services.container.resolve<Admission>(ADMISSION) : undefined;
      // `?org=` narrows it, as on the other reads; an organisation admin naming another is refused
      const only = orgFilter(admin, req.query.org);
      const visible = (org: string | null | undefined) => (admin.role === 'platform_admin' || org === admin.org) && (only === undefined || org === only);
      const keys: StoredKey[] = [...services.keys.configKeys(), ...(await services.keys.collection.all())].filter((k) => !k.revoked && visible(k.org));
      const organizations = withConfigOrganizations(services.config.organizations, await orgs.all()).filter((o) => visible(o.id));
      const subjects = [
        ...keys.map((k) => ({ kind: 'key' as const, id: k.id, name: k.name ?? null, org: k.org, maxBudget: k.maxBudget, budgetDuration: k.budgetDuration })),
        ...organizations.map((o) => ({ kind: 'org' as const, id: o.id, name: o.name ?? null, org: o.id, maxBudget: o.maxBudget, budgetDuration: o.budgetDuration })),
      ].filter((s) => typeof s.maxBudget === 'number');
      const data = [];
      for (const s of subjects) {
        const usage = admission?.budgetUsage ? await admission.budgetUsage(s.kind, s.kind === 'key' ? keySubjectId(s.id, s.org) : s.id, s.budgetDuration, s.kind === 'key' ? { keyId: s.id, org: s.org ?? null } : { org: s.id }) : { spent: 0, periodStart: null, periodEnd: null };
        data.push({ object: 'budget', ...s, budgetDuration: s.budgetDuration ?? null, ...usage });
      }
      res.json({ object: 'list', data });
    }),
  );
}
