import type { AuthedContext, GatewayContext } from './context';
import type { GatewayError } from '../errors/gateway-error';

/** The card's lifecycle, in order. The runner refuses at boot any other list (design.md §2). */
export const STAGE_ORDER = ['auth', 'scope', 'route', 'pre-guardrail', 'call', 'post-guardrail', 'spend'] as const;
export type StageName = (typeof STAGE_ORDER)[number];

/** How a request ended, handed to every `settle` (in reverse order). */
export interface Outcome {
  /** the HTTP status the client got (or was getting when the stream ended) */
  status: number;
  error?: GatewayError;
  /** why it ended early: the client went away, the upstream cut the stream, ... */
  reason?: 'ok' | 'error' | 'client_abort' | 'upstream_cut' | 'stream_error';
}

/**
 * One stage. Every stage but auth runs on an authenticated context (`ctx.principal` is set): the auth
 * stage runs first and either signs the request in or throws.
 */
export interface Stage {
  readonly name: StageName;
  /** A stage with nothing to wait for returns nothing: the driver awaits only a promise (a hop saved per stage). */
  run(ctx: AuthedContext): Promise<void> | void;
  /** Runs at the end, whatever happened, for every stage whose `run` started. */
  settle?(ctx: GatewayContext, outcome: Outcome): Promise<void> | void;
  /** Settle even when an earlier stage failed before this one ran (spend logs a blocked request too). */
  readonly settlesUnstarted?: boolean;
}
