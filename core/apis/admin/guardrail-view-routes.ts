import type { Router } from 'express';
import type { StoredKey } from '../../auth/key-registry';
import type { GuardrailRecord } from '../../guardrails/guardrail-record';
import { DEFAULT_ENGINE_TIMEOUT_MS } from '../../guardrails/guardrail-set';
import { adminAuth, adminHandler, adminOf, orgFilter } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';
import { parseRange } from './query-params';

const VERDICTS: ReadonlySet<unknown> = new Set<GuardrailRecord['verdict']>(['allow', 'mask', 'block', 'error']);

const DAY_MS = 86_400_000;
type VerdictCounts = Record<GuardrailRecord['verdict'] | 'audited', number>;

/**
 * `GET /admin/v1/guardrails?since=&until=`: each configured guardrail (engine, phases, traffic, mode, on
 * error, timeout, default or not), the keys it applies to (every key when `default`; else the keys that
 * list it) and its verdicts in the range (default: the last 24 hours) counted from the request log. An
 * organisation admin sees only its own keys and its own traffic. Engine options are not shown: they may
 * hold a moderation API's credential.
 */
export function installAdminGuardrailViewRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);

  router.get(
    '/admin/v1/guardrails',
    auth,
    adminHandler(async (req, res) => {
      const org = orgFilter(adminOf(res), req.query.org);
      const range = parseRange(req.query);
      const since = range.since ?? new Date(services.clock.now() - DAY_MS).toISOString();
      const counts = new Map<string, VerdictCounts>();
      for (const g of services.config.guardrails) counts.set(g.id, { allow: 0, mask: 0, block: 0, error: 0, audited: 0 });
      for await (const e of services.requestLog.scan(since, range.until)) {
        if (org && e.org !== org) continue;
        const records = e.details?.guardrails;
        if (!Array.isArray(records)) continue;
        for (const r of records as GuardrailRecord[]) {
          const c = counts.get(r.id);
          // the log's own words, but read back from a store: only the four verdicts count
          if (!c || !VERDICTS.has(r.verdict)) continue;
          c[r.verdict] += 1;
          if (r.audited) c.audited += 1;
        }
      }
      const keys: StoredKey[] = [...services.keys.configKeys(), ...(await services.keys.collection.all())].filter((k) => !k.revoked && (!org || k.org === org));
      const data = services.config.guardrails.map((g) => ({
        object: 'guardrail',
        id: g.id,
        engine: g.engine,
        phases: g.phase ? [g.phase] : ['pre', 'post'],
        traffic: g.on ?? ['chat', 'mcp'],
        mode: g.mode ?? 'enforce',
        onError: g.onError ?? 'block',
        // the timeout that applies, as onError and mode show theirs: a null read as "no timeout"
        timeoutMs: g.timeoutMs ?? DEFAULT_ENGINE_TIMEOUT_MS,
        default: g.default === true,
        keys: (g.default ? keys : keys.filter((k) => k.guardrails?.includes(g.id))).map((k) => ({ id: k.id, name: k.name ?? null, org: k.org })),
        verdicts: counts.get(g.id),
      }));
      res.json({ object: 'list', since, until: range.until ?? null, data });
    }),
  );
}
