/**
 * The documented fields of a chat-completions request (POST /v1/chat/completions), checked for type and
 * range as the OpenAI API checks them, on pass-through too. Fields not named here pass through unchanged
 * for the upstream to judge (providers add their own).
 */
import { Type } from '@sinclair/typebox';
import { compileRequestSchema, Nullable } from '../../http/request-schema';

/** The largest integer OpenAI's API takes in an integer field ("Expected a value <= 2147483647"). */
const MAX_INT32 = 2_147_483_647;

// a text part holds its text, as OpenAI checks: without it an upstream got `{type: "text"}` (Claude and
// Gemini refused it in their own words, a lenient server answered as if the part were empty)
const ContentPart = Type.Object(
  { type: Type.String() },
  { allOf: [{ if: { properties: { type: { const: 'text' } } }, then: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } }] },
);
const Message = Type.Object({
  role: Type.String({ minLength: 1 }),
  content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()], { hint: 'must be a string, an array of content parts or null' })),
  name: Type.Optional(Type.String()),
  tool_call_id: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Nullable(Type.Array(Type.Object({ type: Type.String() })))),
});
const Tool = Type.Object({ type: Type.String({ minLength: 1 }) });

export const ChatRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Message, { minItems: 1 }),
  stream: Type.Optional(Nullable(Type.Boolean())),
  stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  // OpenAI takes a 32-bit integer here; a larger one (1e300 is an integer to JSON) was reserved at admission
  // as that many tokens, and a budget's or tpm counter's real spend vanished in the float sum
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_INT32 }))),
  max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_INT32 }))),
  n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
  presence_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  frequency_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  logprobs: Type.Optional(Nullable(Type.Boolean())),
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  logit_bias: Type.Optional(Nullable(Type.Record(Type.String(), Type.Number({ minimum: -100, maximum: 100 })))),
  seed: Type.Optional(Nullable(Type.Integer())),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()], { hint: 'must be a string, an array of up to 4 strings or null' })),
  tools: Type.Optional(Nullable(Type.Array(Tool))),
  tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({ type: Type.String() }), Type.Null()], { hint: "must be 'none', 'auto', 'required' or a tool choice object" })),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
  response_format: Type.Optional(Nullable(Type.Object({ type: Type.String() }))),
  user: Type.Optional(Nullable(Type.String())),
  store: Type.Optional(Nullable(Type.Boolean())),
  metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
});

export const chatRequestValidator = compileRequestSchema(ChatRequestSchema, 'openai');
