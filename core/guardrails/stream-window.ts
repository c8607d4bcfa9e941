/**
 * Enforcing a text guardrail on a stream without buffering the stream (design.md §2): hold back only
 * the last `windowChars` characters, so a value split across chunks is seen whole before any of it is
 * sent, and release everything before that as soon as it is checked.
 *
 * The helper knows nothing about what the engine looks for. It relies on one property: an engine finds
 * values no longer than the window. Then a value that is still incomplete at the end of the text starts
 * inside the window, and the text before the window can be released once we know no complete value
 * straddles the cut. That is tested by checking the whole pending text and each side of the cut: if the
 * masked whole equals the masked left side plus the masked right side, nothing straddles, and the masked
 * left side is released. Otherwise the cut is retried as more text arrives (the cut moves past the value),
 * up to `maxHoldChars`, after which the masked whole is released. The one value known to outgrow that
 * limit, a PEM private key, is remembered across such a release (see `openPrivateKey`).
 */

import { isInvisible } from './invisible';
import { PRIVATE_KEY_BEGIN as PEM_BEGIN } from './private-key';

export type WindowVerdict =
  | { action: 'allow' }
  | { action: 'mask'; text: string }
  | { action: 'block'; code: string; reason: string };

/**
 * Inspect one piece of text. Must be deterministic: the same text gives the same verdict. `start` is
 * where the text begins in everything the channel received, and nothing before `from` is checked again
 * (a check that reads the text's context, JSON's strings, keeps what it needs from there on).
 */
export type WindowCheck = (text: string, start?: number, from?: number) => WindowVerdict | Promise<WindowVerdict>;

export interface StreamWindowOptions {
  /** characters held back; at least the longest value the engine finds (default 256) */
  windowChars?: number;
  /** most characters held while a found value straddles every cut tried (default 4096) */
  maxHoldChars?: number;
  /**
   * release only once this many characters beyond the window have arrived (default 32): checking on
   * every few-character delta would rescan the window each time for little gain in latency
   */
  stepChars?: number;
}

/** Thrown by `push`/`end` when the check blocks; carries the verdict, never the text. */
export class StreamBlockedError extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'StreamBlockedError';
  }
}

export const DEFAULT_WINDOW_CHARS = 256;
export const DEFAULT_MAX_HOLD_CHARS = 4096;
export const DEFAULT_STEP_CHARS = 32;

/**
 * JavaScript's whitespace (`\s`: what a block pattern's `\s` and a blocked phrase's spaces match, Unicode
 * spaces included), so that a run of any of it counts as one character of the window.
 */
const isWhitespace = (code: number) =>
  code <= 32
    ? code === 32 || (code >= 9 && code <= 13)
    : code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * A PEM private key is the one value an engine finds that may be longer than the hold limit (an
 * RSA-8192 key is about 6.3 KB). When `text` ends inside one, returns what an engine needs to see before
 * the rest of the stream to know it is still inside it: the BEGIN line and the end of the last line.
 */
function openPrivateKey(text: string, tailChars: number): string {
  let last: RegExpExecArray | null = null;
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m !== null; m = PEM_BEGIN.exec(text)) last = m;
  if (!last) return '';
  const after = last.index + last[0].length;
  if (text.includes(`-----END ${last[1]}-----`, after)) return '';
  const lineStart = text.lastIndexOf('\n') + 1;
  const lead = lineStart <= after ? text.slice(last.index, after + tailChars) : `${last[0]}\n${text.slice(Math.max(lineStart, text.length - tailChars))}`;
  // a CR whose LF has not arrived would read as the end of the key's body
  return lead.endsWith('\r') ? lead.slice(0, -1) : lead;
}

export class StreamWindow {
  private pending = '';
  /** where `pending` begins in everything received */
  private released = 0;
  private blocked: StreamBlockedError | null = null;
  /**
   * After a release forced by the hold limit inside a private key: the key's beginning, checked again
   * before the held text so the engine masks the rest of the key too (and not again what was released)
   */
  private lead = '';
  private maskedLead = '';
  private readonly windowChars: number;
  private readonly maxHoldChars: number;
  private readonly stepChars: number;

  /** `plainText`: false for a channel whose check reads offsets into the text (a JSON document) */
  constructor(
    private readonly check: WindowCheck,
    options: StreamWindowOptions = {},
    private readonly plainText = true,
  ) {
    this.windowChars = Math.max(1, options.windowChars ?? DEFAULT_WINDOW_CHARS);
    this.maxHoldChars = Math.max(this.windowChars * 2, options.maxHoldChars ?? DEFAULT_MAX_HOLD_CHARS);
    this.stepChars = Math.max(1, options.stepChars ?? DEFAULT_STEP_CHARS);
  }

  /** Characters received but not yet released. */
  get heldChars(): number {
    return this.pending.length;
  }

  /** Add a delta; returns the text that is now safe to send (often ''). Calls must not overlap. */
  async push(delta: string): Promise<string> {
    if (this.blocked) throw this.blocked;
    this.pending += delta;
    if (this.pending.length < this.windowChars + this.stepChars) return '';
    return this.release();
  }

  /** The stream ended: check and release everything still held. */
  async end(): Promise<string> {
    if (this.blocked) throw this.blocked;
    const text = this.pending;
    this.pending = '';
    if (text.length === 0) return '';
    const masked = await this.applyAfterLead(text, this.released);
    this.released += text.length;
    this.lead = this.maskedLead = '';
    return masked;
  }

  private async release(): Promise<string> {
    // The last word may go on in the next delta ("internal" of "internally", an "e" whose combining
    // accent follows): a check that read the end of the held text as the end of a word would block a
    // word the stream never writes. That word waits for the next release, or for the end.
    const all = this.pending;
    const text = all.slice(0, this.wordsEnd(all));
    const rest = all.slice(text.length);
    const cut = this.cutPoint(text);
    if (cut <= 0) return '';
    const from = this.released;
    const whole = await this.applyAfterLead(text, from);
    if (whole === text) {
      // nothing found at all, so nothing straddles the cut
      this.pending = text.slice(cut) + rest;
      this.released += cut;
      this.lead = this.maskedLead = '';
      return text.slice(0, cut);
    }
    const left = text.slice(0, cut);
    const right = text.slice(cut);
    // the right side without the lead: the cut is safe only once the key has ended before it
    const [maskedLeft, maskedRight] = [await this.applyAfterLead(left, from), await this.apply(right, from + cut)];
    if (maskedLeft + maskedRight === whole) {
      this.pending = right + rest;
      this.released += cut;
      this.lead = this.maskedLead = '';
      return maskedLeft;
    }
    if (text.length >= this.maxHoldChars) {
      // a value (or an engine that is not deterministic) straddles every cut: bound the memory
      this.pending = rest;
      this.released += text.length;
      await this.keepLead(this.lead + text);
      return whole;
    }
    return '';
  }

  /**
   * Where the last whitespace of `text` ends, unless the word after it is longer than the window. Not
   * between a CR and the LF that may follow: a private key's line read as ending in a lone CR ends it.
   */
  private wordsEnd(text: string): number {
    const bound = Math.max(0, text.length - this.maxHoldChars);
    for (let i = text.length - 1, counted = 0; i >= bound && counted < this.windowChars; i--) {
      const code = text.charCodeAt(i);
      if (isWhitespace(code) && !(code === 13 && i === text.length - 1)) return i + 1;
      if (!isInvisible(code)) counted++;
    }
    return text.length > 1 && text.charCodeAt(text.length - 1) === 13 ? text.length - 1 : text.length;
  }

  /** Release up to where the window begins, preferably just after a whitespace, never inside a surrogate pair. */
  private cutPoint(text: string): number {
    const limit = this.windowStart(text);
    const floor = Math.max(0, limit - this.windowChars);
    for (let i = limit - 1; i >= floor; i--) {
      if (isWhitespace(text.charCodeAt(i))) return i + 1;
    }
    return limit > 0 && isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit;
  }

  /**
   * Where the held window begins: `windowChars` characters from the end, a run of whitespace counting as
   * one. A phrase matches across any run of whitespace, so counting each space would release its first
   * word before a long run brought the last one into view. Invisible characters do not count at all, for
   * the same reason: a word matches with them removed. The hold stays bounded by `maxHoldChars`.
   */
  private windowStart(text: string): number {
    const bound = Math.max(0, text.length - Math.max(this.windowChars, this.maxHoldChars - this.stepChars));
    let counted = 0;
    for (let i = text.length - 1; i > bound; i--) {
      const code = text.charCodeAt(i);
      if (isInvisible(code)) continue;
      let before = i - 1;
      while (before > bound && isInvisible(text.charCodeAt(before))) before--;
      if (!(isWhitespace(code) && isWhitespace(text.charCodeAt(before)))) counted++;
      if (counted >= this.windowChars) return i;
    }
    return bound;
  }

  /**
   * Remember the beginning of a private key that `text` (just released) ends inside, if an engine masked
   * it to the end: the key's later lines are then masked as they arrive, up to its END line.
   */
  private async keepLead(text: string): Promise<void> {
    this.lead = this.maskedLead = '';
    const lead = this.plainText ? openPrivateKey(text, this.windowChars) : '';
    if (!lead) return;
    const masked = await this.apply(lead, this.released);
    // an engine that does not mask private keys leaves the lead's last character where it was
    if (masked.length > 0 && masked.charCodeAt(masked.length - 1) === lead.charCodeAt(lead.length - 1)) return;
    this.lead = lead;
    this.maskedLead = masked;
  }

  /** `text` masked as it reads after the lead; what the lead itself masks to was released already. */
  private async applyAfterLead(text: string, start: number): Promise<string> {
    if (!this.lead) return this.apply(text, start);
    const masked = await this.apply(this.lead + text, start);
    // a replacement that depends on the value (a hash) differs from the released one: it is sent again
    return masked.startsWith(this.maskedLead) ? masked.slice(this.maskedLead.length) : masked;
  }

  private async apply(text: string, start: number): Promise<string> {
    const verdict = await this.check(text, start, this.released);
    if (verdict.action === 'block') {
      this.blocked = new StreamBlockedError(verdict.code, verdict.reason);
      this.pending = '';
      throw this.blocked;
    }
    return verdict.action === 'mask' ? verdict.text : text;
  }
}

/** The same as an async-iterable transform: masked text out, as soon as it is safe; throws on block. */
export async function* windowedStream(deltas: AsyncIterable<string>, check: WindowCheck, options?: StreamWindowOptions): AsyncGenerator<string> {
  const window = new StreamWindow(check, options);
  for await (const delta of deltas) {
    const out = await window.push(delta);
    if (out) yield out;
  }
  const rest = await window.end();
  if (rest) yield rest;
}
