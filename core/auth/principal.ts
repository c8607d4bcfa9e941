import type { KeyMcpRestrictions } from '../config/types';

export type Role = 'member' | 'admin' | 'platform_admin';

/** Who is calling: the virtual key after auth, with its restrictions compiled once. */
export interface Principal {
  keyId: string;
  keyName?: string;
  /** null for the platform admin key */
  org: string | null;
  role: Role;
  /** may this key use the public model name? (compiled from `models` patterns) */
  allowsModel(name: string): boolean;
  models?: string[];
  mcp?: KeyMcpRestrictions;
  guardrails: string[];
  maxBudget?: number;
  budgetDuration?: string;
  rpm?: number;
  tpm?: number;
}
