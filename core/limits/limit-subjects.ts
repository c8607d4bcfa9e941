import { GENERATED_ID } from '../auth/key-registry';
import { orgKeyId } from '../auth/org-key-id';
import type { Principal } from '../auth/principal';
import type { OrganizationConfig } from '../config/types';
import type { ChangeEvents } from '../store/events/change-events';
import type { Collection, StoreBackend } from '../store/store-backend';
import { parseDuration } from './duration';

/** A key or an organisation with the limits it carries. */
export interface LimitSubject {
  readonly kind: 'key' | 'org';
  readonly id: string;
  readonly maxBudget?: number;
  /** budget period length; undefined = the budget never resets */
  readonly budgetPeriodMs?: number;
  readonly rpm?: number;
  readonly tpm?: number;
  /** whose rows of the request log are its spend: the key's id and organisation, or the organisation */
  readonly logged: { readonly keyId?: string; readonly org: string | null };
}

const ORG_CACHE_MS = 5_000;

interface CachedOrganization {
  org: OrganizationConfig | undefined;
  /** fresh until: after it the store is asked again */
  until: number;
  /** when the store last answered for it: its copy stands in up to `graceMs` after, while the store fails */
  confirmedAt: number;
}

/**
 * The subjects whose limits a request counts against: its key and its organisation. Organisations come
 * from the config (kept in memory) or from the management API (read from the store, cached for a few
 * seconds like API-created keys).
 */
export class LimitSubjects {
  private readonly configOrgs = new Map<string, OrganizationConfig>();
  private readonly storedOrgs: Collection<OrganizationConfig>;
  private readonly cache = new Map<string, CachedOrganization>();
  /** bumped by every change: a read that started before one does not cache what it read */
  private generation = 0;
  private readonly unsubscribe: () => void;

  /**
   * `graceMs` (store.graceSeconds): how long an organisation read from the store is used while the store
   * cannot be reached, as the key registry serves the keys it validated. Without it a key of an
   * organisation made through the management API got 503 store_unavailable 5 s into an outage, though its
   * key was still served from cache and neither had a limit that needed the store.
   */
  constructor(
    configOrgs: readonly OrganizationConfig[],
    store: StoreBackend,
    private readonly now: () => number,
    private readonly events?: ChangeEvents,
    private readonly graceMs = 60_000,
  ) {
    for (const org of configOrgs) this.configOrgs.set(org.id, org);
    this.storedOrgs = store.collection<OrganizationConfig>('organizations');
    this.unsubscribe = events?.subscribe((event) => {
      if (event.type === 'organization.changed') this.forget(event.orgId);
    }) ?? (() => undefined);
  }

  /**
   * An organisation's record changed in the store: its new limits hold from this instance's next request
   * (the cached copy kept the old ones for its lifetime), and from the other instances' once told.
   */
  async changed(id: string): Promise<void> {
    this.forget(id);
    // best effort: an instance that misses it rereads the organisation within ORG_CACHE_MS
    await this.events?.publish({ type: 'organization.changed', orgId: id }).catch(() => undefined);
  }

  close(): void {
    this.unsubscribe();
  }

  private forget(id: string): void {
    this.generation += 1;
    this.cache.delete(id);
  }

  /**
   * The subjects of a principal. Synchronous when the organisation is known without the store (config,
   * or cached): every request asks, and most need no store read, so they should not wait a microtask.
   */
  of(principal: Principal): LimitSubject[] | Promise<LimitSubject[]> {
    const subjects: LimitSubject[] = [];
    if (hasLimits(principal)) subjects.push(toSubject('key', keySubjectId(principal.keyId, principal.org), principal, { keyId: principal.keyId, org: principal.org ?? null }));
    if (!principal.org) return subjects;
    const known = this.knownOrganization(principal.org);
    if (known) return withOrg(subjects, known.org);
    return this.storedOrganization(principal.org).then((org) => withOrg(subjects, org));
  }

  /** The organisation from the config or a fresh cache entry (`{ org: undefined }`: known not to exist); undefined when the store must be asked. */
  private knownOrganization(id: string): { org: OrganizationConfig | undefined } | undefined {
    const fromConfig = this.configOrgs.get(id);
    if (fromConfig) return { org: fromConfig };
    const cached = this.cache.get(id);
    if (cached && cached.until > this.now()) return cached;
    return undefined;
  }

  private async storedOrganization(id: string): Promise<OrganizationConfig | undefined> {
    const now = this.now();
    const generation = this.generation;
    let org: OrganizationConfig | undefined;
    try {
      org = await this.storedOrgs.get(id);
    } catch (err) {
      // the store did not answer: a copy it confirmed lately stands in (one dropped by a change does not)
      const cached = this.cache.get(id);
      if (cached && now - cached.confirmedAt < this.graceMs) return cached.org;
      throw err;
    }
    if (generation !== this.generation) return org;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { org, until: now + ORG_CACHE_MS, confirmedAt: now });
    return org;
  }
}

function withOrg(subjects: LimitSubject[], org: OrganizationConfig | undefined): LimitSubject[] {
  if (org && hasLimits(org)) subjects.push(toSubject('org', org.id, org, { org: org.id }));
  return subjects;
}

/**
 * The name a key's counters go by. A generated id (a management-API key) is unique across organisations
 * and keeps its name; a config key's id is unique only within its organisation (each may have a `bot`),
 * and one name for both let one organisation's traffic spend the other's budget and rate limit.
 */
export function keySubjectId(keyId: string, org: string | null | undefined): string {
  return GENERATED_ID.test(keyId) || !org ? keyId : orgKeyId(org, keyId);
}

type Limits = Pick<OrganizationConfig, 'maxBudget' | 'budgetDuration' | 'rpm' | 'tpm'>;

function hasLimits(l: Limits): boolean {
  return l.maxBudget !== undefined || l.rpm !== undefined || l.tpm !== undefined;
}

function toSubject(kind: LimitSubject['kind'], id: string, l: Limits, logged: LimitSubject['logged']): LimitSubject {
  return { kind, id, maxBudget: l.maxBudget, budgetPeriodMs: parseDuration(l.budgetDuration), rpm: l.rpm, tpm: l.tpm, logged };
}
