/** The Bedrock Converse API's JSON (Converse and ConverseStream): only the fields the translation uses. */

export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export type ConverseBlock =
  | { text: string }
  | { image: { format: ConverseImageFormat; source: { bytes: string } } }
  | { document: { format: 'pdf'; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ({ text: string } | { json: unknown })[]; status?: 'success' | 'error' } }
  | { cachePoint: { type: 'default' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface ConverseToolSpec {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: ({ text: string } | { cachePoint: { type: 'default' } })[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: ConverseToolSpec[]; toolChoice?: ConverseToolChoice };
  additionalModelRequestFields?: Record<string, unknown>;
  /** JSON Pointers into the model's own answer, returned in additionalModelResponseFields */
  additionalModelResponseFieldPaths?: string[];
}

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** the cache writes by TTL, e.g. [{ ttl: '1h', inputTokens: 2000 }, { ttl: '5m', inputTokens: 1000 }] */
  cacheDetails?: { ttl?: string; inputTokens?: number }[];
}

export interface ConverseResponse {
  output?: { message?: { role?: string; content?: Record<string, any>[] } };
  stopReason?: string;
  additionalModelResponseFields?: Record<string, unknown>;
  usage?: ConverseUsage;
}
