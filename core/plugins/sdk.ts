/**
 * The plugin SDK: everything a provider, guardrail or MCP transport plugin may use from the gateway, in one
 * entry point. Packages import it as `model-gateway/sdk`; the built-in plugins (providers/, guardrails/,
 * plugins/) and examples/ import it by relative path and nothing else from core/
 * (test/core/plugins/sdk-imports.test.ts enforces that). Anything not exported here is an engine internal
 * that may change without notice.
 */

// Contracts and the typed helper a plugin module default-exports.
export type * from './contracts';
export { isLocalOperation, MCP_UNANSWERED_REASON } from './contracts';
export { definePlugin } from './define-plugin';
export { onFirstUse } from './on-first-use';

// The config shapes a provider target carries (secrets already resolved).
export type { ModelConfig, ProviderConfig, McpServerConfig, GuardrailConfig, Secret } from '../config/types';

// The canonical format inside the gateway (OpenAI chat completions) and token counts.
export type * from '../types/chat';
export type { TokenUsage } from '../types/usage';
export { emptyUsage } from '../types/usage';

// The Anthropic Messages format and its mapping to and from the canonical one, for providers that speak it.
export type * from '../apis/messages/types';
export { finishReasonFromStopReason, stopReasonFromFinishReason } from '../apis/messages/stop-reasons';
export { chatUsageFromMessagesUsage, messagesUsageFromChatUsage, tokenUsageFromMessagesUsage } from '../apis/messages/usage';
export { BUDGET_OF_EFFORT, isThinkingBlock, reasoningText, thinkingBlockOf, thinkingBlocksOfContent } from '../apis/messages/thinking';
export { outputFormatOfResponseFormat } from '../apis/messages/output-config';

// Image edits: the uploaded multipart form a provider re-encodes for its upstream.
export { editUploadOf, EditUpload, type EditFields, type UploadedFileInfo } from '../apis/images/edit-upload';
export { sniffImageType } from '../apis/images/image-type';
export { INVISIBLE } from '../guardrails/invisible';
export { PRIVATE_KEY_BEGIN } from '../guardrails/private-key';

// A pass-through body: the client's own text with the model renamed, or the request serialised anew.
export { bodyWithModel } from '../formats/body-with-model';

// Server-sent events: the frame a translator returns, and the SSE decoder (the default `StreamDecoder`, and a
// parser for plugins that read a stream themselves). `PreparedRequest` and `StreamDecoder` are in the contracts.
export { SseFrame } from '../streaming/sse-frame';
export { SseDecoder, parseSse } from '../streaming/sse-parser';
/** the largest whole answer the gateway takes from an upstream (transports hold theirs to it too) */
export { MAX_ANSWER_BYTES } from '../upstream/gathered-answer';

// Errors: the GatewayError hierarchy every endpoint renders in its own wire shape, boot errors with a path.
export {
  GatewayError,
  InvalidRequestError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  PayloadTooLargeError,
  GuardrailBlockedError,
  BudgetExceededError,
  RateLimitError,
  UpstreamError,
  UpstreamTimeoutError,
  ServiceUnavailableError,
  ConfigError,
  PluginError,
  type GatewayErrorOptions,
} from '../errors/gateway-error';

// Scrubbing: take credentials out of any text (an upstream's error message) before it leaves the gateway.
export { scrubMessage } from '../errors/scrub';

// Provider entries: the operator's `headers` on each upstream request, names in lower case.
export { withConfiguredHeaders } from '../upstream/configured-headers';

// Egress: whether an address is loopback, private or link-local (transports that connect sockets).
export { isInternalAddress } from '../upstream/egress';

// Tracing: the W3C trace headers of the upstream call in progress (MCP transports add them to their requests).
export { outboundTraceHeaders } from '../observability/trace-headers';
