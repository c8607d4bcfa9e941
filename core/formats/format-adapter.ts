import type { ApiFormat } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';
import type { ChatRequest, ChatResponse } from '../types/chat';
import type { TokenUsage } from '../types/usage';

/**
 * What the core knows about one client-facing API shape (design.md §3). Endpoints speak a format; when a
 * provider does not serve that format natively, the call stage translates to the canonical chat shape and
 * back with `toChat` / `fromChat` / `streamFromChat`.
 */
export interface FormatAdapter {
  readonly format: ApiFormat;
  /** Translate a request of this format to the canonical chat request (absent: chat only, or no fallback). */
  toChat?(body: any): ChatRequest;
  fromChat?(response: ChatResponse, requestBody: any): unknown;
  streamFromChat?(frames: AsyncIterable<SseFrame>, requestBody: any): AsyncIterable<SseFrame>;
  /** Token usage of a JSON response of this format. */
  usageOf(body: any): TokenUsage | undefined;
  /**
   * Token usage carried by one stream frame, if any (cheap when the frame has none). `scratch` is one
   * object per stream, for a format whose frames must be read together. The meter keeps each counter's
   * largest reading, or, with `usageOfFrameIsTotal`, its latest (each reading is the stream's usage so far).
   */
  usageOfFrame?(frame: SseFrame, scratch?: Record<string, unknown>): Partial<TokenUsage> | undefined;
  usageOfFrameIsTotal?: boolean;
  /** Does this frame properly end a stream of this format? A stream that ends without one was cut. */
  isTerminalFrame?(frame: SseFrame): boolean;
}
