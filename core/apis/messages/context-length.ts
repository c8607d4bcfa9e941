/**
 * A prompt over the model's context window (`context_length_exceeded`), told to a Messages client in
 * Anthropic's words whichever provider refused it. Claude Code compacts its history when it reads "prompt is
 * too long" (and sizes the cut from "N tokens > M maximum"), and lowers `max_tokens` on "input length and
 * `max_tokens` exceed context limit: I + O > L"; in OpenAI's or Google's wording it only shows the error and
 * the next turn fails the same way.
 */

/** Anthropic's own wording, as its API or a Claude model behind Bedrock or Vertex says it. */
const ANTHROPIC_WORDING = /prompt is too long|exceed context limit/i;

// The numbers other providers give, by what they count. OpenAI: "This model's maximum context length is
// 128000 tokens. However, your messages resulted in 130532 tokens" or "you requested 9000 tokens (5000 in
// the messages, 4000 in the completion)", and "Input tokens exceed the configured limit of 272000 tokens.
// Your messages resulted in 300123 tokens"; vLLM: "your request has 5000 input tokens", "'max_tokens' ...
// is too large: 1000"; Gemini: "The input token count (1200000) exceeds the maximum number of tokens
// allowed (1048576)"; xAI: "This model's maximum prompt length is 131072 but the request contains 136973
// tokens."
const LIMIT = [/maximum context length is (\d+)/i, /limit of (\d+) tokens/i, /maximum number of tokens allowed \(?(\d+)/i, /maximum prompt length is (\d+)/i];
const PROMPT = [/resulted in (\d+) tokens/i, /\((\d+) in the messages/i, /request has (\d+) input tokens/i, /input token count \(?(\d+)/i, /request contains (\d+) tokens/i];
const OUTPUT = [/(\d+) in the completion/i, /max_completion_tokens'? is too large: (\d+)/i];

export function anthropicContextLengthMessage(message: string): string {
  // Bedrock puts Claude's words after its own ("The model returned the following errors: prompt is too long: ...")
  const anthropic = ANTHROPIC_WORDING.exec(message);
  if (anthropic) return message.slice(anthropic.index);
  const limit = firstNumber(LIMIT, message);
  const prompt = firstNumber(PROMPT, message);
  const output = firstNumber(OUTPUT, message);
  if (limit !== undefined && prompt !== undefined) {
    if (prompt > limit) return `prompt is too long: ${prompt} tokens > ${limit} maximum`;
    // the prompt fits; with the room asked for the answer it does not
    if (output !== undefined) return `input length and \`max_tokens\` exceed context limit: ${prompt} + ${output} > ${limit}, decrease input length or \`max_tokens\` and try again`;
  }
  return `prompt is too long for the model's context window${message ? `: ${message}` : ''}`;
}

function firstNumber(patterns: RegExp[], message: string): number | undefined {
  for (const pattern of patterns) {
    const digits = pattern.exec(message)?.[1];
    if (digits !== undefined) return Number(digits);
  }
  return undefined;
}
