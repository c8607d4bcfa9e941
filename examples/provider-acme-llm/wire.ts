/** The (fictional) Acme LLM wire format this example provider translates to and from. */
export interface AcmeRequest {
  model: string;
  system?: string;
  turns: { role: 'user' | 'model'; text: string }[];
  max_new_tokens: number;
  temperature?: number;
  stream?: boolean;
}

export interface AcmeResponse {
  id: string;
  output: { text: string };
  stop: 'end' | 'length';
  usage: { input_tokens: number; output_tokens: number };
}

/** Stream events: `token` many times, then one `done`. */
export type AcmeEvent = { type: 'token'; text: string } | { type: 'done'; stop: 'end' | 'length'; usage: AcmeResponse['usage'] };

export interface AcmeError {
  error: { kind: string; detail: string };
}
