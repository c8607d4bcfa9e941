import type { SlotCollector } from '../../guardrails/text-slots';

/** Chat completions request: message text (string, text or refusal parts, an assistant's refusal), tool-call and legacy function-call arguments, predicted output, `name`-less. */
export function chatRequestSlots(body: any, c: SlotCollector): void {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  messages.forEach((m: any, i: number) => {
    const at = `messages[${i}]`;
    contentSlots(m, `${at}`, c);
    // an earlier assistant turn's refusal goes back to the model as its text does
    c.field(m, 'refusal', `${at}.refusal`);
    if (Array.isArray(m?.tool_calls)) {
      m.tool_calls.forEach((t: any, j: number) => toolCallSlots(t, `${at}.tool_calls[${j}]`, c));
    }
    // the deprecated `functions` parameter's calls: OpenAI still serves them, and they carry arguments as tool calls do
    c.jsonString(m?.function_call, 'arguments', `${at}.function_call.arguments`);
  });
  // Predicted Outputs: text the upstream reads as much as a message, a string or text parts
  contentSlots(body?.prediction, 'prediction', c);
}

/** The request asked for a JSON answer (`response_format` json_object or json_schema). */
export function structuredOutput(request: any): boolean {
  const type = request?.response_format?.type;
  return type === 'json_object' || type === 'json_schema';
}

/** A tool call's arguments: a function's JSON, or a custom tool's free text (`custom.input`). */
function toolCallSlots(call: any, at: string, c: SlotCollector): void {
  c.jsonString(call?.function, 'arguments', `${at}.function.arguments`);
  c.field(call?.custom, 'input', `${at}.custom.input`);
}

/** `holder.content` as a string, or an array of parts whose text parts are slots. */
export function contentSlots(holder: any, at: string, c: SlotCollector): void {
  const content = holder?.content;
  if (typeof content === 'string') return c.field(holder, 'content', `${at}.content`);
  if (!Array.isArray(content)) return;
  content.forEach((part: any, k: number) => {
    if (part?.type === 'text') c.field(part, 'text', `${at}.content[${k}].text`);
    else if (part?.type === 'refusal') c.field(part, 'refusal', `${at}.content[${k}].refusal`);
  });
}

/** Chat completions response: each choice's content, refusal and tool-call (and legacy function-call) arguments. */
export function chatResponseSlots(body: any, c: SlotCollector, request?: any): void {
  const choices = Array.isArray(body?.choices) ? body.choices : [];
  const structured = structuredOutput(request);
  choices.forEach((choice: any, i: number) => {
    const at = `choices[${i}].message`;
    const message = choice?.message;
    // a structured answer is a JSON document, masked where its values are written, as tool-call arguments are
    if (structured && typeof message?.content === 'string') c.jsonString(message, 'content', `${at}.content`);
    // a string, or (some OpenAI-compatible servers) a list of parts, as a request's content may be
    else contentSlots(message, at, c);
    c.field(message, 'refusal', `${at}.refusal`);
    if (Array.isArray(message?.tool_calls)) {
      message.tool_calls.forEach((t: any, j: number) => toolCallSlots(t, `${at}.tool_calls[${j}]`, c));
    }
    c.jsonString(message?.function_call, 'arguments', `${at}.function_call.arguments`);
    // an audio answer (modalities: audio) has its words here, not in content
    c.field(message?.audio, 'transcript', `${at}.audio.transcript`);
    logprobsSlots(choice, `choices[${i}]`, c);
  });
}

/**
 * A choice's logprobs spell its text out token by token (and each token's bytes): they are checked as
 * that text, and when an engine masks it they are dropped, since no token can be masked on its own.
 */
function logprobsSlots(choice: any, at: string, c: SlotCollector): void {
  for (const channel of ['content', 'refusal']) {
    const tokens = choice?.logprobs?.[channel];
    if (!Array.isArray(tokens)) continue;
    const text = tokens.map((t: any) => (typeof t?.token === 'string' ? t.token : '')).join('');
    if (text.length > 0) c.slots.push({ path: `${at}.logprobs.${channel}`, text, put: () => void (choice.logprobs = null) });
  }
}
