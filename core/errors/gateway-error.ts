/**
 * One error hierarchy for the whole gateway (design.md §7). `code` is stable snake_case and is what
 * tests assert on; `status` is the HTTP status; `type` is the OpenAI-style error type. Each endpoint
 * family renders these in its own wire shape (see render.ts).
 */
import { scrubSecrets } from './scrub';

export interface GatewayErrorOptions {
  param?: string | null;
  cause?: unknown;
  /** extra response headers, e.g. Retry-After */
  headers?: Record<string, string>;
}

export class GatewayError extends Error {
  readonly param: string | null;
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    options: GatewayErrorOptions = {},
  ) {
    // scrubbed here, once, because some messages reach clients without a renderer (as MCP tool results)
    super(scrubSecrets(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }
}

export class InvalidRequestError extends GatewayError {
  constructor(message: string, code = 'invalid_request', options?: GatewayErrorOptions) {
    super(400, 'invalid_request_error', code, message, options);
  }
}

export class AuthenticationError extends GatewayError {
  constructor(message = 'Invalid or missing API key.', code = 'invalid_api_key') {
    super(401, 'authentication_error', code, message);
  }
}

export class PermissionError extends GatewayError {
  constructor(message: string, code = 'permission_denied') {
    super(403, 'permission_error', code, message);
  }
}

export class NotFoundError extends GatewayError {
  constructor(message: string, code = 'not_found', options?: GatewayErrorOptions) {
    super(404, 'not_found_error', code, message, options);
  }
}

export class PayloadTooLargeError extends GatewayError {
  constructor(message = 'Request body is too large.') {
    super(413, 'invalid_request_error', 'payload_too_large', message);
  }
}

export class GuardrailBlockedError extends GatewayError {
  constructor(message: string, readonly guardrailId?: string) {
    super(400, 'invalid_request_error', 'guardrail_blocked', message);
  }
}

export class BudgetExceededError extends GatewayError {
  constructor(message: string) {
    super(429, 'budget_exceeded', 'budget_exceeded', message);
  }
}

export class RateLimitError extends GatewayError {
  constructor(message: string, code = 'rate_limit_exceeded', options?: GatewayErrorOptions) {
    super(429, 'rate_limit_error', code, message, options);
  }
}

export class UpstreamError extends GatewayError {
  constructor(message: string, code = 'upstream_error', options?: GatewayErrorOptions & { status?: number }) {
    super(options?.status ?? 502, 'upstream_error', code, message, options);
  }
}

export class UpstreamTimeoutError extends GatewayError {
  constructor(message = 'The upstream did not answer in time.', code = 'upstream_timeout') {
    super(504, 'timeout_error', code, message);
  }
}

export class ServiceUnavailableError extends GatewayError {
  constructor(message: string, code = 'service_unavailable', options?: GatewayErrorOptions) {
    super(503, 'service_unavailable', code, message, options);
  }
}

/**
 * The store (database or Redis) did not answer within its timeout, or its circuit breaker is open: the
 * request is refused at once rather than made to wait, and never answered as if a record were missing.
 */
export class StoreUnavailableError extends ServiceUnavailableError {
  constructor(message = 'The gateway cannot reach its store right now; try again shortly.', options: GatewayErrorOptions = {}) {
    super(message, 'store_unavailable', options);
  }
}

/** Boot-time errors carry the JSON path of the bad field. */
export class ConfigError extends Error {
  constructor(readonly path: string, message: string) {
    super(path ? `${path}: ${message}` : message);
    this.name = 'ConfigError';
  }
}

export class PluginError extends ConfigError {
  constructor(path: string, message: string) {
    super(path, message);
    this.name = 'PluginError';
  }
}

/** Anything that is not a GatewayError becomes a generic 500; its cause goes to the log only. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(500, 'server_error', 'internal_error', 'The gateway hit an internal error.', { cause: err });
}
