/**
 * Extended thinking between the Messages format and the canonical chat format, both ways:
 *
 * - the request switch: Messages `thinking: {type: "enabled", budget_tokens}` <-> chat `reasoning_effort`
 *   (low / medium / high; a budget is mapped to the nearest effort and an effort to a fixed budget);
 * - the answer: Messages `thinking` / `redacted_thinking` blocks <-> chat `reasoning_content` (the text)
 *   plus `thinking_blocks` (the blocks themselves, signatures included, so they can come back unchanged);
 * - the history: thinking blocks of earlier assistant turns <-> `thinking_blocks` on chat assistant messages.
 *
 * Used by the Messages endpoint for non-Anthropic models and by the anthropic provider for chat clients.
 */
import type { ThinkingBlock } from '../../types/chat';
import type { MessagesContentBlock } from './types';
import { clientText } from '../../formats/client-text';

/**
 * The thinking budget an effort asks for (Anthropic's minimum budget is 1024). OpenAI's efforts above high
 * (xhigh, max) think more, not at all; with the default 4096 answer tokens, max's budget still fits the
 * 32,000 output tokens of the Claude models with the smallest limit (Opus 4, 4.1).
 */
export const BUDGET_OF_EFFORT: ReadonlyMap<string, number> = new Map([
  ['minimal', 1024],
  ['low', 1024],
  ['medium', 4096],
  ['high', 16384],
  ['xhigh', 24576],
  ['max', 27904],
]);

/** The effort closest to a budget: up to 2048 low, up to 8192 medium, above that high. */
export function effortOfBudget(budget: number): 'low' | 'medium' | 'high' {
  if (budget <= 2048) return 'low';
  if (budget <= 8192) return 'medium';
  return 'high';
}

/** Is this block reasoning (rather than text or a tool call)? */
export function isThinkingBlock(block: { type?: unknown } | null | undefined): block is ThinkingBlock {
  return block?.type === 'thinking' || block?.type === 'redacted_thinking';
}

/** The readable text of thinking blocks (redacted ones have none), or undefined when there is none. */
export function reasoningText(blocks: readonly ThinkingBlock[]): string | undefined {
  const texts = blocks.filter((b) => b.type === 'thinking').map((b) => clientText((b as { thinking: unknown }).thinking ?? ''));
  return texts.length > 0 ? texts.join('\n\n') : undefined;
}

/** A copy of a client's or upstream's block, with only the fields Anthropic defines for it. */
export function thinkingBlockOf(block: ThinkingBlock): ThinkingBlock {
  if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: clientText(block.data ?? '') };
  return { type: 'thinking', thinking: clientText(block.thinking ?? ''), signature: clientText(block.signature ?? '') };
}

/**
 * The thinking blocks of a chat answer (or of an assistant message passed back): its `thinking_blocks`
 * when it has them, else its reasoning text as one unsigned block. `reasoning` is the name some
 * OpenAI-compatible servers use for `reasoning_content`.
 */
export function thinkingBlocksOfChat(message: { reasoning_content?: unknown; reasoning?: unknown; thinking_blocks?: unknown } | undefined): ThinkingBlock[] {
  if (Array.isArray(message?.thinking_blocks)) return (message.thinking_blocks as ThinkingBlock[]).filter(isThinkingBlock).map(thinkingBlockOf);
  const text = typeof message?.reasoning_content === 'string' ? message.reasoning_content : typeof message?.reasoning === 'string' ? message.reasoning : '';
  return text !== '' ? [{ type: 'thinking', thinking: text, signature: '' }] : [];
}

/** Messages content blocks -> the thinking blocks among them. */
export function thinkingBlocksOfContent(content: readonly MessagesContentBlock[]): ThinkingBlock[] {
  return content.filter(isThinkingBlock).map((b) => thinkingBlockOf(b as ThinkingBlock));
}
