/**
 * Token estimates for what an upstream did but never reported: a stream cut or blocked before its usage
 * frame, and the prompt size a translated Messages stream must announce in `message_start` before the
 * chat upstream has counted it. About four characters per token, the usual rule of thumb for English
 * text; an estimate is always flagged as one (`usageEstimated` in the log).
 */
import type { ApiFormat } from '../plugins/contracts';
import type { SseFrame } from '../streaming/sse-frame';
import type { TokenUsage } from '../types/usage';

export const CHARS_PER_TOKEN = 4;

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * What an inline image costs: models bill an image by its pixels, not by its base64 (Claude about 1,600
 * tokens for the largest it takes unscaled, OpenAI's high detail up to about 1,100).
 */
export const IMAGE_TOKENS = 1_600;

/**
 * What a PDF page costs: models read each page as its text and as a picture of it (Claude: 1,500 to 3,000
 * text tokens a page, plus the picture's).
 */
export const PDF_PAGE_TOKENS = 3_000 + IMAGE_TOKENS;

/** The prompt a request body carries: its messages (or Responses input), system prompt and tools. */
export function estimatePromptTokens(body: any): number {
  let chars = 0;
  let images = 0;
  let pages = 0;
  // base64 image data (a data: URL, a Messages base64 source) counted as an image, not as text: a
  // 300 KB picture would otherwise read as 100,000 tokens, in message_start and in a cut stream's charge
  function replacer(this: unknown, key: string, value: unknown): unknown {
    if (typeof value !== 'string' || value.length < 64) return value;
    const base64Source = key === 'data' && (this as { type?: unknown } | null)?.type === 'base64';
    if (value.startsWith('data:image/') || (base64Source && isMediaType(this, 'image/'))) {
      images++;
      return '';
    }
    // a PDF (a chat file part's data URL, a Messages document block) by its pages: a scanned page's
    // picture is hundreds of KB of base64, and read as text a short report reserved 100,000 tokens
    if (value.startsWith('data:application/pdf;base64,') || (base64Source && isMediaType(this, 'application/pdf'))) {
      const counted = pdfPages(value.startsWith('data:') ? value.slice(value.indexOf(',') + 1) : value);
      // a PDF whose page objects are compressed (object streams) cannot be counted: it counts by its size
      if (counted > 0) {
        pages += counted;
        return '';
      }
    }
    return value;
  }
  const add = (value: unknown) => {
    if (value === undefined || value === null) return;
    chars += typeof value === 'string' ? value.length : safeLength(value, replacer);
  };
  if (body?.messages !== undefined || body?.input !== undefined) {
    add(body.messages);
    add(body.input);
    add(body.system);
    add(body.instructions);
    add(body.tools);
  } else add(body);
  return tokensOfChars(chars) + images * IMAGE_TOKENS + pages * PDF_PAGE_TOKENS;
}

/** `/Type /Page` dictionaries (not the `/Pages` tree nodes) in a base64 PDF's bytes. */
function pdfPages(base64: string): number {
  const bytes = Buffer.from(base64, 'base64').toString('latin1');
  return bytes.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
}

/** An embeddings input's tokens: its texts at about four characters a token, token-id arrays as their length. */
export function estimateEmbeddingTokens(input: unknown): number {
  const items = Array.isArray(input) ? input : [input];
  // one input given as token ids
  if (items.length > 0 && items.every((item) => typeof item === 'number')) return items.length;
  let tokens = 0;
  for (const item of items) {
    if (typeof item === 'string') tokens += tokensOfChars(item.length);
    else if (Array.isArray(item)) tokens += item.length;
  }
  return tokens;
}

function isMediaType(source: unknown, prefix: string): boolean {
  const mediaType = (source as { media_type?: unknown }).media_type;
  return typeof mediaType === 'string' && mediaType.startsWith(prefix);
}

function safeLength(value: unknown, replacer?: (this: unknown, key: string, value: unknown) => unknown): number {
  try {
    return JSON.stringify(value, replacer as never)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * The string value of a key that holds generated text, in chat chunks and Messages events. Written here,
 * not taken from config; linear (no nested repetition), so native RegExp is safe. Unrolled (a run of plain
 * characters, then escapes each followed by another run): an alternation repeated once per character
 * keeps a backtracking entry per character, and a value of a few million characters (one long word from
 * the echo model, or an upstream's) overflowed the stack and failed the stream.
 */
const TEXT_VALUE = /"(?:content|refusal|reasoning_content|arguments|text|partial_json|thinking)":\s*"([^"\\]*(?:\\.[^"\\]*)*)"/g;

/**
 * The generated text in a frame's data: chat content, reasoning, refusal and tool arguments; Messages
 * text, thinking and tool-input deltas. Read from the text without parsing it, escapes counted as
 * written, which is close enough for an estimate.
 */
function textLength(data: string): number {
  let n = 0;
  TEXT_VALUE.lastIndex = 0;
  for (let match = TEXT_VALUE.exec(data); match !== null; match = TEXT_VALUE.exec(data)) n += match[1].length;
  return n;
}

/**
 * The generated text of a whole (non-streamed) chat or Messages answer, in characters, counted as a
 * stream's is; a Messages tool call's input is an object, not a string, so it counts as its JSON.
 */
export function answerTextChars(body: unknown): number {
  let chars = textLength(safeJson(body));
  const content = (body as { content?: unknown } | null)?.content;
  if (Array.isArray(content)) {
    for (const block of content) if (block?.type === 'tool_use') chars += safeLength(block.input);
  }
  return chars;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Streams of generated text, whose unreported usage can be estimated from that text. */
export const TEXT_FORMATS: ReadonlySet<ApiFormat> = new Set<ApiFormat>(['chat', 'messages']);

/**
 * The generated text a stream has carried so far, counted only if it is ever asked for. Only a stream
 * that does not run to its end needs the count (one that does has its usage reported), so the frames'
 * text is kept, up to PENDING_CHARS at a time, and read only when more arrives or `chars()` is called:
 * most streams never pay for it. Frames are counted as they were when they passed (their text is kept,
 * or the upstream's bytes of a frame nobody has read, not the frames). A frame's bytes also hold its
 * `data: ` and `event:` prefixes: no text value is found in those, so the count is the same.
 */
export class StreamedText {
  private counted = 0;
  /**
   * Frames not counted yet: their text, or for a frame that passed through unread the buffer of its
   * upstream read followed by where the frame is in it (start, end), so no view is made per frame.
   */
  private pending: (string | Buffer | number)[] = [];
  private pendingChars = 0;

  /** a stream of generated text (else nothing is ever counted) */
  private readonly counts: boolean;

  constructor(format: ApiFormat) {
    this.counts = TEXT_FORMATS.has(format);
  }

  add(frame: SseFrame): void {
    if (!this.counts || frame.isDone) return;
    // the bytes as they are now (a frame that changes later drops them), decoded only if ever counted
    const src = frame.wireSource;
    if (src) {
      const { pending } = this;
      const last = pending.length - 1;
      // the next frame of the same read, right after the last: one range for the run (a text value of
      // well-formed JSON ends within its frame, so the count is the same)
      if (last >= 2 && pending[last - 2] === src && pending[last] === frame.wireStart) pending[last] = frame.wireEnd;
      else pending.push(src, frame.wireStart, frame.wireEnd);
      this.pendingChars += frame.wireEnd - frame.wireStart;
    } else {
      const data = frame.data;
      this.pending.push(data);
      this.pendingChars += data.length;
    }
    if (this.pendingChars > PENDING_CHARS) this.countPending();
  }

  /** characters of generated text in the frames added so far */
  chars(): number {
    this.countPending();
    return this.counted;
  }

  private countPending(): void {
    const { pending } = this;
    for (let i = 0; i < pending.length; i++) {
      const item = pending[i];
      if (typeof item === 'string') this.counted += textLength(item);
      else if (Buffer.isBuffer(item)) {
        this.counted += textLength(item.toString('utf8', pending[i + 1] as number, pending[i + 2] as number));
        i += 2;
      }
    }
    this.pending = [];
    this.pendingChars = 0;
  }
}

/** the frame text a stream holds uncounted: a short answer whole, a long one a piece at a time */
const PENDING_CHARS = 16 * 1024;

/**
 * Fill in the counters the upstream never reported: output from the text streamed so far, input from
 * the request. A stream that ended early may have reported an output count at its start only (Anthropic's
 * `message_start` says 1), so the output estimate wins when it is larger. Returns whether anything was
 * estimated (the caller flags the log entry).
 */
export function fillUnreportedUsage(usage: TokenUsage, requestBody: unknown, outputChars: number): boolean {
  let estimated = false;
  const output = tokensOfChars(outputChars);
  if (output > usage.outputTokens) {
    usage.outputTokens = output;
    estimated = true;
  }
  if (usage.inputTokens === 0 && requestBody !== undefined) {
    usage.inputTokens = estimatePromptTokens(requestBody);
    estimated = usage.inputTokens > 0 || estimated;
  }
  return estimated;
}
