/**
 * A model's reasoning in the Responses format, over the canonical chat rounds:
 *
 *   chat `reasoning_content` / `thinking_blocks`  ->  a `reasoning` output item: the text as its summary,
 *   the blocks (Anthropic's, signatures included) in `encrypted_content`, opaque to the client;
 *   a `reasoning` input item sent back  ->  `thinking_blocks` on the assistant turn that follows it.
 *
 * Only blocks a provider can take back are carried (signed thinking, redacted thinking): plain reasoning
 * text from an OpenAI-compatible server has no signature and no provider accepts it as input.
 */
import type { ThinkingBlock } from '../../types/chat';

/** What a round's chat answer said about its reasoning, assembled from a body or a stream. */
export class ReasoningCollector {
  readonly blocks: ThinkingBlock[] = [];

  /** Reasoning text: extends the open (unsigned) thinking block or starts one. */
  text(delta: string): void {
    const last = this.blocks[this.blocks.length - 1];
    if (last?.type === 'thinking' && !last.signature) last.thinking += delta;
    else this.blocks.push({ type: 'thinking', thinking: delta });
  }

  /**
   * A block the upstream gave: a signature closes the open thinking block; a redacted block is added. A
   * signed block whose text is the open block's, already streamed as reasoning text, only signs it.
   */
  block(block: ThinkingBlock): void {
    if (block?.type === 'thinking') {
      const last = this.blocks[this.blocks.length - 1];
      const signature = typeof block.signature === 'string' ? block.signature : '';
      const streamed = last?.type === 'thinking' && !last.signature && last.thinking === block.thinking;
      if (typeof block.thinking === 'string' && block.thinking !== '' && !streamed) this.text(block.thinking);
      else if (last?.type !== 'thinking' || last.signature) this.blocks.push({ type: 'thinking', thinking: '' });
      if (signature) (this.blocks[this.blocks.length - 1] as { signature?: string }).signature = signature;
    } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
      this.blocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }

  get summary(): string {
    return this.blocks.map((b) => (b.type === 'thinking' ? b.thinking : '')).filter((t) => t !== '').join('\n\n');
  }

  /** The blocks a provider accepts back on the next turn (signed or redacted). */
  get replayable(): ThinkingBlock[] {
    return this.blocks.filter((b) => b.type === 'redacted_thinking' || (typeof b.signature === 'string' && b.signature !== ''));
  }
}

const PREFIX = 'gw1.';

/** Replayable blocks -> the opaque `encrypted_content` of a reasoning item. */
export function encodeReasoning(blocks: ThinkingBlock[]): string | undefined {
  return blocks.length > 0 ? PREFIX + Buffer.from(JSON.stringify(blocks), 'utf8').toString('base64url') : undefined;
}

/** A reasoning item's `encrypted_content`, if the gateway wrote it, -> its blocks (anything else: none). */
export function decodeReasoning(encrypted: unknown): ThinkingBlock[] {
  if (typeof encrypted !== 'string' || !encrypted.startsWith(PREFIX)) return [];
  try {
    const blocks = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'));
    if (!Array.isArray(blocks)) return [];
    return blocks.flatMap((b): ThinkingBlock[] => {
      if (b?.type === 'thinking' && typeof b.thinking === 'string' && typeof b.signature === 'string') return [{ type: 'thinking', thinking: b.thinking, signature: b.signature }];
      if (b?.type === 'redacted_thinking' && typeof b.data === 'string') return [{ type: 'redacted_thinking', data: b.data }];
      return [];
    });
  } catch {
    return [];
  }
}
