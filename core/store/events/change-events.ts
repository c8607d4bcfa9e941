import { randomUUID } from 'node:crypto';

/**
 * Changes one gateway instance makes that the others must see within a second (issue 13 point 4). Every
 * event only says *what* changed; a receiver drops or refetches its cached copy, so the store stays the
 * one source of truth and a lost event costs at most one cache lifetime (caches remain the backstop).
 *
 * Transport-agnostic: in-process (one instance), Redis pub/sub (several), node:cluster IPC (workers).
 * Events are delivered to every subscriber, including the publishing instance's own: handlers must be
 * idempotent (they only invalidate).
 */
export type ChangeEvent = (
  /** a stored key was updated or revoked (`revoked`: it must stop working at once) */
  | { type: 'key.changed'; keyId: string; revoked?: boolean }
  /** an organisation stored through the management API was created or changed (its limits) */
  | { type: 'organization.changed'; orgId: string }
  /** an MCP server record was registered, updated or removed */
  | { type: 'mcp-server.changed'; serverId: string; change: 'added' | 'updated' | 'removed' }
  /** a tool of an MCP server was enabled or disabled */
  | { type: 'tool-state.changed'; serverId: string; tool: string; enabled: boolean }
  /** a deployment was put in cooldown until `until` (ms since the epoch); 0: put back in service */
  | { type: 'deployment.cooldown'; deploymentId: string; until: number }
) & {
  /** the gateway instance that published it (stamped by InstanceEvents), so it can skip work it has already done */
  origin?: string;
};

export type ChangeEventType = ChangeEvent['type'];

export interface ChangeEvents {
  /** send to every instance (this one included); resolves once handed to the transport */
  publish(event: ChangeEvent): Promise<void>;
  /** returns the unsubscribe function */
  subscribe(handler: (event: ChangeEvent) => void): () => void;
  close(): Promise<void>;
}

const TYPES: ReadonlySet<string> = new Set<ChangeEventType>(['key.changed', 'organization.changed', 'mcp-server.changed', 'tool-state.changed', 'deployment.cooldown']);

/** Parse an event that came over a wire; undefined for anything not shaped like one (older or newer peers). */
export function parseChangeEvent(raw: string): ChangeEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' && TYPES.has(type) ? (value as ChangeEvent) : undefined;
}

/**
 * One gateway instance's view of a shared transport: what it publishes carries its `origin`, and closing
 * it drops only its own subscriptions (in-process gateways share one transport).
 */
export class InstanceEvents implements ChangeEvents {
  /** random per gateway instance: two in one process (tests) are still two origins */
  readonly origin = randomUUID();
  private readonly unsubscribers = new Set<() => void>();

  constructor(private readonly transport: ChangeEvents) {}

  publish(event: ChangeEvent): Promise<void> {
    return this.transport.publish({ ...event, origin: this.origin });
  }

  subscribe(handler: (event: ChangeEvent) => void): () => void {
    const off = this.transport.subscribe(handler);
    this.unsubscribers.add(off);
    return () => {
      this.unsubscribers.delete(off);
      off();
    };
  }

  /** the instance's subscriptions only; the transport belongs to whoever opened it */
  async close(): Promise<void> {
    for (const off of this.unsubscribers) off();
    this.unsubscribers.clear();
  }
}
