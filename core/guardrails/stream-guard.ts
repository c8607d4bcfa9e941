import { GuardrailBlockedError } from '../errors/gateway-error';
import type { ApiFormat } from '../plugins/contracts';
import { SseFrame } from '../streaming/sse-frame';
import { StreamBlockedError, StreamWindow, type StreamWindowOptions, type WindowCheck } from './stream-window';
import { modelResponseSlots } from './extract';
import { structuredOutput } from '../apis/chat/guardrail-text';

/**
 * Post guardrails on a streaming model answer: every text channel of the stream (a choice's content
 * and refusal, a tool call's arguments, a Messages content block) goes through its own bounded window,
 * and each frame carries the text that is safe so far. Frames are rewritten in place, never collected:
 * latency grows by the window, memory by the window per open channel. A block ends the stream with a
 * GuardrailBlockedError, which the endpoint writes as an error event in the API's own format.
 */
export type ChannelCheck = (path: string) => WindowCheck;

class Channels {
  private readonly open = new Map<string, StreamWindow>();
  constructor(
    private readonly checkFor: ChannelCheck,
    private readonly options: StreamWindowOptions,
  ) {}

  /** `json`: the channel streams a JSON document (tool-call arguments, a tool_use block's input) */
  async push(key: string, path: string, delta: string, json = false): Promise<string> {
    let window = this.open.get(key);
    if (!window) {
      const check = this.checkFor(path);
      this.open.set(key, (window = new StreamWindow(json ? jsonStringsOnly(check) : check, this.options, !json)));
    }
    return window.push(delta);
  }

  /** Text that comes whole, not in deltas: checked at once; returns it masked, throws on a block. */
  async whole(path: string, text: string): Promise<string> {
    const verdict = await this.checkFor(path)(text);
    if (verdict.action === 'block') throw new StreamBlockedError(verdict.code, verdict.reason);
    return verdict.action === 'mask' ? verdict.text : text;
  }

  /** Close the channels whose key starts with `prefix`; returns [key, rest] for those with text left. */
  async close(prefix = ''): Promise<[string, string][]> {
    const out: [string, string][] = [];
    for (const [key, window] of [...this.open]) {
      if (!key.startsWith(prefix)) continue;
      this.open.delete(key);
      const rest = await window.end();
      if (rest) out.push([key, rest]);
    }
    return out;
  }
}

const OUTSIDE = 0;
const IN_STRING = 1;
const ESCAPED = 2;

/** The JSON lexer's state after character code `c`: outside strings, inside one, or just after a backslash in one. */
function nextState(state: number, c: number): number {
  if (state === ESCAPED) return IN_STRING;
  if (state === IN_STRING) return c === 92 ? ESCAPED : c === 34 ? OUTSIDE : IN_STRING;
  return c === 34 ? IN_STRING : OUTSIDE;
}

/** The JSON lexer's state after `text`, from `state`. */
function scanJson(text: string, state: number): number {
  for (let i = 0; i < text.length; i++) state = nextState(state, text.charCodeAt(i));
  return state;
}

/** `text` cut into the runs inside strings (without their quotes) and the runs outside them. */
function jsonPieces(text: string, state: number): { inString: boolean; text: string }[] {
  const pieces: { inString: boolean; text: string }[] = [];
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const inside = state !== OUTSIDE;
    state = nextState(state, text.charCodeAt(i));
    // a quote ends the run it closes or starts the run it opens: it belongs to the run outside
    if (inside && state === OUTSIDE) {
      pieces.push({ inString: true, text: text.slice(at, i) });
      at = i;
    } else if (!inside && state === IN_STRING) {
      pieces.push({ inString: false, text: text.slice(at, i + 1) });
      at = i + 1;
    }
  }
  pieces.push({ inString: state !== OUTSIDE, text: text.slice(at) });
  return pieces.filter((p) => p.text.length > 0);
}

/**
 * The text of the inside of a JSON string as written (`raw`, without its quotes), its escapes read; an
 * escape cut off at the end (the rest arrives with the next delta) is left out as `tail`.
 */
function decodeJsonString(raw: string): { text: string; tail: string } {
  let end = raw.length;
  const slash = raw.lastIndexOf('\\', end - 1);
  if (slash >= 0) {
    // a run of backslashes: an odd one at the end of the run opens an escape
    let run = 0;
    while (slash - run >= 0 && raw.charCodeAt(slash - run) === 92) run++;
    const needs = raw.charCodeAt(slash + 1) === 117 ? 6 : 2;
    if (run % 2 === 1 && raw.length - slash < needs) end = slash;
  }
  try {
    return { text: JSON.parse(`"${raw.slice(0, end)}"`) as string, tail: raw.slice(end) };
  } catch {
    return { text: raw, tail: '' };
  }
}

/**
 * A JSON document streamed as text: masks go only inside its strings, as a JSON answer's string values
 * are the only ones masked. A mask written over a number (a card number sent as one) or across two
 * strings left text that is not JSON, and the SDKs parse it (the Anthropic SDK at every delta) and fail.
 * The text is checked whole first; only text the engines mask is checked again, string by string.
 */
function jsonStringsOnly(check: WindowCheck): WindowCheck {
  // the lexer's state at `base` (an offset in everything received) and the text received from there
  let base = 0;
  let baseState = OUTSIDE;
  let tail = '';
  return async (text, start = 0, from = 0) => {
    if (from > base) {
      baseState = scanJson(tail.slice(0, from - base), baseState);
      tail = tail.slice(from - base);
      base = from;
    }
    const state = scanJson(tail.slice(0, start - base), baseState);
    if (start - base + text.length > tail.length) tail = tail.slice(0, start - base) + text;
    const pieces = jsonPieces(text, state);
    // the whole text as its strings read (escapes decoded), as the engines see a JSON answer's values
    const readable = pieces.map((p) => (p.inString ? decodeJsonString(p.text).text : p.text)).join('');
    const verdict = await check(readable, start, from);
    if (verdict.action !== 'mask') return verdict;
    let out = '';
    let at = start;
    for (const piece of pieces) {
      let next = piece.text;
      if (piece.inString) {
        // checked as the JSON answer's string is, its escapes read: the "n" of a "\n" is no letter of
        // the word it precedes, and masked text written back escaped keeps the document JSON
        const { text: decoded, tail } = decodeJsonString(piece.text);
        const inner = await check(decoded, at, from);
        if (inner.action === 'block') return inner;
        if (inner.action === 'mask') next = JSON.stringify(inner.text).slice(1, -1) + tail;
      }
      out += next;
      at += piece.text.length;
    }
    return out === text ? { action: 'allow' } : { action: 'mask', text: out };
  };
}

/** `request`: the request the stream answers (a chat request asking for JSON gets its content checked as JSON) */
export function guardStream(format: ApiFormat, frames: AsyncIterable<SseFrame>, checkFor: ChannelCheck, options: StreamWindowOptions = {}, request?: unknown): AsyncIterable<SseFrame> | undefined {
  if (format === 'chat') return rethrowBlocks(guardChatStream(frames, new Channels(checkFor, options), structuredOutput(request)));
  if (format === 'messages') return rethrowBlocks(guardMessagesStream(frames, new Channels(checkFor, options)));
  return undefined;
}

async function* rethrowBlocks(frames: AsyncIterable<SseFrame>): AsyncGenerator<SseFrame> {
  try {
    yield* frames;
  } catch (err) {
    if (err instanceof StreamBlockedError) throw new GuardrailBlockedError(err.reason);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------
// chat.completion.chunk streams
// ---------------------------------------------------------------------------------------------------

async function* guardChatStream(frames: AsyncIterable<SseFrame>, channels: Channels, jsonContent = false): AsyncGenerator<SseFrame> {
  let template: Record<string, unknown> | undefined;
  const tokens = new Map<string, HeldTokens>();
  const heldTokens = (key: string) => {
    let held = tokens.get(key);
    if (!held) tokens.set(key, (held = new HeldTokens()));
    return held;
  };
  /** the logprobs of the rest of each channel closed, beside that rest */
  const closing = (rests: [string, string][]) => rests.map(([key, rest]): [string, string, unknown[]] => [key, rest, tokens.get(key)?.rest(rest) ?? []]);
  for await (const frame of frames) {
    if (frame.isDone) {
      yield* chatFlush(closing(await channels.close()), template);
      yield frame;
      continue;
    }
    const chunk = frame.json;
    if (!Array.isArray(chunk?.choices) || chunk.choices.length === 0) {
      yield frame;
      continue;
    }
    template = { id: chunk.id, object: chunk.object, created: chunk.created, model: chunk.model };
    let changed = false;
    let empty = chunk.usage == null;
    const heldBefore: [string, string, unknown[]][] = [];
    for (const choice of chunk.choices) {
      const delta = choice?.delta;
      const i = choice?.index ?? 0;
      // where this frame carries a channel's text, by channel key: its held rest is appended there
      const carried = new Map<string, (rest: string) => void>();
      // The logprobs spell the text out token by token: they wait with the text they spell, and go out
      // beside it once it is released unchanged (never once a guardrail has masked it).
      const logprobs = choice?.logprobs;
      const released: Record<'c' | 'r', unknown[]> = { c: [], r: [] };
      const withTokens = (channel: 'c' | 'r', sent: string, text: string) => {
        released[channel].push(...heldTokens(`${i}/${channel}`).take(logprobs?.[channel === 'c' ? 'content' : 'refusal'], sent, text));
      };
      if (typeof delta?.content === 'string' && delta.content) {
        const sent = delta.content;
        // a structured answer streams a JSON document, masked only inside its strings as its JSON answer is
        delta.content = await channels.push(`${i}/c`, `choices[${i}].delta.content`, sent, jsonContent);
        withTokens('c', sent, delta.content);
        carried.set(`${i}/c`, (rest) => (delta.content += rest));
        changed = true;
      } else if (Array.isArray(delta?.content)) {
        // some OpenAI-compatible servers stream content as a list of text parts, as a JSON answer's may be
        let last: { text: string } | undefined;
        let sent = '';
        let out = '';
        for (const part of delta.content) {
          if (part?.type !== 'text' || typeof part.text !== 'string' || !part.text) continue;
          sent += part.text;
          part.text = await channels.push(`${i}/c`, `choices[${i}].delta.content`, part.text);
          out += part.text;
          last = part;
        }
        withTokens('c', sent, out);
        if (last) {
          const into = last;
          carried.set(`${i}/c`, (rest) => (into.text += rest));
          changed = true;
        }
      } else {
        withTokens('c', '', '');
      }
      // a refusal is the model's text too (a JSON answer's refusal is checked the same way)
      if (typeof delta?.refusal === 'string' && delta.refusal) {
        const sent = delta.refusal;
        delta.refusal = await channels.push(`${i}/r`, `choices[${i}].delta.refusal`, sent);
        withTokens('r', sent, delta.refusal);
        carried.set(`${i}/r`, (rest) => (delta.refusal += rest));
        changed = true;
      } else {
        withTokens('r', '', '');
      }
      if (logprobs != null || released.c.length > 0 || released.r.length > 0) {
        choice.logprobs = released.c.length > 0 || released.r.length > 0 ? { content: released.c.length > 0 ? released.c : null, refusal: released.r.length > 0 ? released.r : null } : null;
        changed = true;
      }
      if (Array.isArray(delta?.tool_calls)) {
        for (const call of delta.tool_calls) {
          const args = call?.function?.arguments;
          if (typeof args === 'string' && args) {
            call.function.arguments = await channels.push(`${i}/t${call.index ?? 0}`, `choices[${i}].delta.tool_calls[${call.index ?? 0}].function.arguments`, args, true);
            carried.set(`${i}/t${call.index ?? 0}`, (rest) => (call.function.arguments += rest));
            changed = true;
          }
        }
      }
      // an audio answer streams its words as the transcript of its audio chunks
      const transcript = delta?.audio?.transcript;
      if (typeof transcript === 'string' && transcript) {
        delta.audio.transcript = await channels.push(`${i}/a`, `choices[${i}].delta.audio.transcript`, transcript);
        carried.set(`${i}/a`, (rest) => (delta.audio.transcript += rest));
        changed = true;
      }
      // a legacy function_call (the deprecated `functions` parameter) streams its arguments as a tool call does
      const fnArgs = delta?.function_call?.arguments;
      if (typeof fnArgs === 'string' && fnArgs) {
        delta.function_call.arguments = await channels.push(`${i}/f`, `choices[${i}].delta.function_call.arguments`, fnArgs, true);
        carried.set(`${i}/f`, (rest) => (delta.function_call.arguments += rest));
        changed = true;
      }
      if (choice?.finish_reason != null) {
        // Text held back for a choice goes out before its finish_reason. When this frame carries text of
        // that channel too, the rest follows it inside this frame: a frame of its own sent first would put
        // the end of the text ahead of the part this frame releases.
        for (const [key, rest, restTokens] of closing(await channels.close(`${i}/`))) {
          const append = carried.get(key);
          if (!append) {
            heldBefore.push([key, rest, restTokens]);
            continue;
          }
          append(rest);
          if (restTokens.length === 0) continue;
          const field = key.endsWith('/r') ? 'refusal' : 'content';
          choice.logprobs ??= { content: null, refusal: null };
          choice.logprobs[field] = [...(choice.logprobs[field] ?? []), ...restTokens];
        }
      }
      if (!isEmptyChatChoice(choice)) empty = false;
    }
    yield* chatFlush(heldBefore, template);
    if (changed) frame.markChanged();
    if (!(changed && empty)) yield frame;
  }
  yield* chatFlush(closing(await channels.close()), template);
}

/** A choice with nothing left to say: no text, no tool call text, no role, no finish reason. */
function isEmptyChatChoice(choice: any): boolean {
  if (choice?.finish_reason != null || choice?.logprobs != null) return false;
  const delta = choice?.delta ?? {};
  for (const [k, v] of Object.entries(delta)) {
    if ((k === 'content' || k === 'refusal') && v === '') continue;
    if (k === 'tool_calls' && Array.isArray(v) && v.every((c: any) => !c?.id && !c?.function?.name && !c?.function?.arguments)) continue;
    if (k === 'function_call' && !(v as any)?.name && !(v as any)?.arguments) continue;
    if (k === 'audio' && !(v as any)?.id && !(v as any)?.data && !(v as any)?.transcript) continue;
    if (v == null) continue;
    return false;
  }
  return true;
}

function chatFlush(rests: [string, string, unknown[]][], template: Record<string, unknown> | undefined): SseFrame[] {
  return rests.map(([key, text, tokens]) => {
    const [choice, channel] = key.split('/');
    const logprobs = tokens.length === 0 ? {} : { logprobs: { content: channel === 'c' ? tokens : null, refusal: channel === 'r' ? tokens : null } };
    const delta =
      channel === 'c'
        ? { content: text }
        : channel === 'r'
          ? { refusal: text }
          : channel === 'f'
            ? { function_call: { arguments: text } }
            : channel === 'a'
              ? { audio: { transcript: text } }
              : { tool_calls: [{ index: Number(channel.slice(1)), function: { arguments: text } }] };
    return SseFrame.fromJson({ ...template, choices: [{ index: Number(choice), delta, ...logprobs, finish_reason: null }] });
  });
}

const tokenLength = (entry: any) => (typeof entry?.token === 'string' ? entry.token.length : 0);

/**
 * The logprobs of one text channel, held while its text is: `take` is handed each frame's entries, the
 * text the frame brought and the text the window released, and returns the entries of the text released,
 * as long as every release is the text as it came. Once a guardrail has masked the channel, its logprobs
 * are dropped from there on: no token can be masked on its own.
 */
class HeldTokens {
  private entries: unknown[] = [];
  /** the text received and not yet released */
  private unreleased = '';
  /** released characters not yet matched to a token */
  private credit = 0;
  private masked = false;

  take(entries: unknown, sent: string, released: string): unknown[] {
    if (this.masked) return [];
    if (Array.isArray(entries)) this.entries.push(...entries);
    this.unreleased += sent;
    if (!released) return [];
    if (!this.unreleased.startsWith(released)) {
      this.masked = true;
      this.entries = [];
      this.unreleased = '';
      return [];
    }
    this.unreleased = this.unreleased.slice(released.length);
    this.credit += released.length;
    let n = 0;
    while (n < this.entries.length && tokenLength(this.entries[n]) <= this.credit) this.credit -= tokenLength(this.entries[n++]);
    return this.entries.splice(0, n);
  }

  /** The channel closed with `rest` released: the entries left, unless the rest was masked. */
  rest(rest: string): unknown[] {
    const out = this.take(undefined, '', rest);
    if (this.masked) return [];
    return [...out, ...this.entries.splice(0)];
  }
}

// ---------------------------------------------------------------------------------------------------
// Anthropic Messages event streams
// ---------------------------------------------------------------------------------------------------

async function* guardMessagesStream(frames: AsyncIterable<SseFrame>, channels: Channels): AsyncGenerator<SseFrame> {
  for await (const frame of frames) {
    const type = frame.event ?? (frame.isDone ? undefined : frame.json?.type);
    if (type === 'content_block_start' && frame.json?.content_block?.type === 'text' && typeof frame.json.content_block.text === 'string' && frame.json.content_block.text) {
      // a block may open with text of its own (Anthropic-compatible servers do; the chat translation
      // reads it too): it is the first text of the block's channel, what is held follows as deltas
      const event = frame.json;
      event.content_block.text = await channels.push(`${event.index ?? 0}/text`, `content[${event.index ?? 0}].text`, event.content_block.text);
      frame.markChanged();
      yield frame;
    } else if (type === 'content_block_start' && frame.json?.content_block && typeof frame.json.content_block === 'object') {
      // a block that comes whole (an MCP connector's tool result, a server tool's fetched page, a tool's
      // input given at once) is checked as the same block of a JSON answer is
      const event = frame.json;
      const index = event.index ?? 0;
      let changed = false;
      for (const slot of modelResponseSlots('messages', { content: [event.content_block] })) {
        const masked = await channels.whole(slot.path.replace(/^content\[0\]/, `content[${index}]`), slot.text);
        if (masked === slot.text) continue;
        slot.put(masked);
        changed = true;
      }
      if (changed) frame.markChanged();
      yield frame;
    } else if (type === 'content_block_delta' && frame.json?.delta?.type === 'citations_delta') {
      // a citation comes whole, quoting its document: checked as a JSON answer's citation is
      const citation = frame.json.delta.citation;
      const index = frame.json.index ?? 0;
      if (typeof citation?.cited_text === 'string' && citation.cited_text) {
        const masked = await channels.whole(`content[${index}].citations.cited_text`, citation.cited_text);
        if (masked !== citation.cited_text) {
          citation.cited_text = masked;
          frame.markChanged();
        }
      }
      yield frame;
    } else if (type === 'content_block_delta') {
      const event = frame.json;
      const index = event.index ?? 0;
      const delta = event.delta;
      const field = delta?.type === 'text_delta' ? 'text' : delta?.type === 'input_json_delta' ? 'partial_json' : null;
      if (field && typeof delta[field] === 'string' && delta[field]) {
        const released = await channels.push(`${index}/${field}`, `content[${index}].${field === 'text' ? 'text' : 'input'}`, delta[field], field === 'partial_json');
        if (!released) continue;
        delta[field] = released;
        frame.markChanged();
      }
      yield frame;
    } else if (type === 'content_block_stop') {
      const index = frame.json.index ?? 0;
      for (const [key, text] of await channels.close(`${index}/`)) yield messagesDelta(key, text);
      yield frame;
    } else if (type === 'message_delta' || type === 'message_stop') {
      for (const [key, text] of await channels.close()) yield messagesDelta(key, text);
      yield frame;
    } else {
      yield frame;
    }
  }
  // a stream that ends without its closing events still must not leak what was held
  for (const [key, text] of await channels.close()) yield messagesDelta(key, text);
}

/** The held-back text of a block (channel key `<index>/<field>`), as the kind of delta the block streams. */
function messagesDelta(key: string, text: string): SseFrame {
  const [index, field] = key.split('/');
  const delta = field === 'partial_json' ? { type: 'input_json_delta', partial_json: text } : { type: 'text_delta', text };
  return SseFrame.fromJson({ type: 'content_block_delta', index: Number(index), delta }, 'content_block_delta');
}
