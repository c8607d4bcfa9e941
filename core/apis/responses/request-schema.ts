/**
 * The documented fields of a Responses request (POST /v1/responses), checked as the OpenAI API checks
 * them before the gateway translates anything. Other fields are left alone.
 */
import { Type } from '@sinclair/typebox';
import { compileRequestSchema, Nullable } from '../../http/request-schema';

const Tool = Type.Object({ type: Type.String({ minLength: 1 }) });

export const ResponsesRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}))], { hint: 'expected a string or an array of input items' })),
  instructions: Type.Optional(Nullable(Type.String())),
  stream: Type.Optional(Nullable(Type.Boolean())),
  max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  // unchecked, 1e999 (Infinity once parsed) went upstream as null
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  tools: Type.Optional(Nullable(Type.Array(Tool))),
  tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({ type: Type.String() }), Type.Null()], { hint: "must be 'none', 'auto', 'required' or a tool choice object" })),
  parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
  previous_response_id: Type.Optional(Nullable(Type.String())),
  store: Type.Optional(Nullable(Type.Boolean())),
  // read only when of the right type, a wrong one was dropped without a word: the model answered at its
  // default effort or verbosity, without the logprobs asked for
  text: Type.Optional(Nullable(Type.Object({ verbosity: Type.Optional(Nullable(Type.String())) }))),
  reasoning: Type.Optional(Nullable(Type.Object({ effort: Type.Optional(Nullable(Type.String())) }))),
  include: Type.Optional(Nullable(Type.Array(Type.String()))),
  metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
  truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled'), Type.Null()], { hint: "must be 'auto' or 'disabled'" })),
  user: Type.Optional(Nullable(Type.String())),
});

export const responsesRequestValidator = compileRequestSchema(ResponsesRequestSchema, 'openai');
