/**
 * Turning what the SDK throws into gateway errors. Messages name the server, never its URL (which may
 * carry credentials) and never a header value.
 */
import { GatewayError, UpstreamError, UpstreamTimeoutError } from '../../errors/gateway-error';
import { scrubCredentials } from '../../errors/scrub';
import { MCP_UNANSWERED_REASON } from '../../plugins/contracts';
import { legacyStreamableHttp, legacyTypes, modernClient } from './sdk';

/** the SDKs' error classes and codes (sdk.ts: loaded by the first MCP connection, before any of these is asked) */
function sdkErrors() {
  const { StreamableHTTPError } = legacyStreamableHttp();
  const { ErrorCode, McpError } = legacyTypes();
  const { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } = modernClient();
  return { StreamableHTTPError, ErrorCode, McpError, ProtocolError, SdkError, SdkErrorCode, SdkHttpError };
}

/** 2026-07-28: the receiver does not speak the request's protocol version (error data: supported, requested) */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The upstream answered with a JSON-RPC error: it is alive, it refused this request. */
export class UpstreamRpcError extends UpstreamError {
  /**
   * the upstream's own words, scrubbed of configured secrets (an upstream may echo our headers) and of
   * credentials by shape: a per-user token forwarded to it was never configured
   */
  readonly rpcMessage: string;
  constructor(readonly server: string, readonly rpcCode: number, rpcMessage: string, readonly rpcData?: unknown) {
    super(`MCP server ${server} returned an error: ${scrubCredentials(rpcMessage)}`, 'mcp_upstream_rpc_error');
    this.rpcMessage = scrubCredentials(rpcMessage);
  }
}

/** A stateful upstream no longer knows our session (spec: 404). The pool reconnects and retries once. */
export function isSessionExpired(err: unknown): boolean {
  const { StreamableHTTPError, SdkHttpError } = sdkErrors();
  if (err instanceof StreamableHTTPError || err instanceof SdkHttpError) {
    if (err.code === 404) return true;
    // Some servers (the reference "everything" server among them) answer 400 for an unknown session.
    if (err.code === 400 && /session/i.test(err.message)) return true;
  }
  return false;
}

export function isTimeout(err: unknown): boolean {
  const { SdkError, SdkErrorCode, McpError, ErrorCode } = sdkErrors();
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) return true;
  return err instanceof McpError && err.code === ErrorCode.RequestTimeout && (err.data as { timeout?: unknown } | undefined)?.timeout !== undefined;
}

export function isAbort(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'AbortError';
}

/** True when the failure says nothing reached a healthy upstream (so the pooled connection is suspect). */
export function isConnectionFailure(err: unknown): boolean {
  const { McpError, ErrorCode, ProtocolError, SdkError, SdkErrorCode } = sdkErrors();
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  // SDK 2.x (2026-07-28 upstreams): a JSON-RPC error means the server is alive; a version refusal means
  // it changed revision, which a new connection re-learns; an answer that never came, as with 1.x
  if (err instanceof ProtocolError) return err.code === UNSUPPORTED_PROTOCOL_VERSION || isUnanswered(err);
  if (err instanceof SdkError) return err.code !== SdkErrorCode.RequestTimeout && err.code !== SdkErrorCode.InvalidResult && err.code !== SdkErrorCode.UnsupportedResultType;
  return !(err instanceof GatewayError);
}

/** The closing error the transport adds when a request's answer ended without its result (either SDK). */
function isUnanswered(err: unknown): boolean {
  const { McpError, ProtocolError } = sdkErrors();
  if (!(err instanceof McpError || err instanceof ProtocolError)) return false;
  return (err.data as { reason?: unknown } | undefined)?.reason === MCP_UNANSWERED_REASON;
}

/**
 * The message of the transport's own error with this code, wherever the SDK wrapped it: EGRESS_REFUSED
 * (an internal address refused as the socket connected), ANSWER_TOO_LARGE (an answer past the size limit).
 */
function transportFailure(err: unknown, code: string): string | undefined {
  for (let e = err as { code?: string; message?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code === code) return e.message;
  }
  return undefined;
}

export function toUpstreamGatewayError(server: string, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const refused = transportFailure(err, 'EGRESS_REFUSED');
  if (refused) return new UpstreamError(`MCP server ${server} may not be reached: ${refused}.`, 'mcp_egress_refused');
  const tooLarge = transportFailure(err, 'ANSWER_TOO_LARGE');
  if (tooLarge) return new UpstreamError(`MCP server ${server}: ${tooLarge}`, 'mcp_upstream_bad_response');
  if (isTimeout(err)) return new UpstreamTimeoutError(`MCP server ${server} did not answer in time.`, 'mcp_upstream_timeout');
  const { McpError, ErrorCode, ProtocolError, StreamableHTTPError, SdkHttpError } = sdkErrors();
  if (isUnanswered(err)) return new UpstreamError(`MCP server ${server} ended its answer without a result.`, 'mcp_upstream_unanswered');
  if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) {
    // McpError.message is "MCP error <code>: <message>"; keep the upstream's own words.
    const message = err.message.replace(/^MCP error -?\d+: /, '');
    return new UpstreamRpcError(server, err.code, message, err.data);
  }
  if (err instanceof ProtocolError) return new UpstreamRpcError(server, err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  const status = err instanceof StreamableHTTPError ? err.code : err instanceof SdkHttpError ? err.status : undefined;
  if (err instanceof StreamableHTTPError || err instanceof SdkHttpError) {
    if (status === 401 || status === 403) {
      return new UpstreamError(`MCP server ${server} refused the gateway's credentials (HTTP ${status}).`, 'mcp_upstream_unauthorized');
    }
    return new UpstreamError(`MCP server ${server} answered HTTP ${status ?? 'error'}.`, 'mcp_upstream_http_error');
  }
  return new UpstreamError(`MCP server ${server} is unreachable.`, 'mcp_upstream_unreachable', { cause: err });
}
