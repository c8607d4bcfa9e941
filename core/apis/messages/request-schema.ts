/**
 * The documented fields of an Anthropic Messages request (POST /native/v1/messages and its count_tokens),
 * checked as the Anthropic API checks them, on pass-through to an Anthropic model too (an upstream
 * refusal would cost a round trip and say less). Other fields pass through unchanged.
 */
import { Type } from '@sinclair/typebox';
import { compileRequestSchema } from '../../http/request-schema';

// a text block holds its text, a tool_result the id of the call it answers, a tool_use its id, name and an
// object of input: without them a chat upstream got `{type: "text"}`, a tool message answering no call or a
// tool call without id or name (input a string: arguments that are a JSON string), and refused it in its own words.
// A null input goes as {} (to-chat-request.ts), as the answer to a call whose arguments were "null" may come back
const Block = Type.Object(
  { type: Type.String({ minLength: 1 }) },
  {
    allOf: [
      { if: { properties: { type: { const: 'text' } } }, then: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } },
      { if: { properties: { type: { const: 'tool_result' } } }, then: { type: 'object', required: ['tool_use_id'], properties: { tool_use_id: { type: 'string', minLength: 1 } } } },
      {
        if: { properties: { type: { const: 'tool_use' } } },
        then: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', minLength: 1 }, name: { type: 'string', minLength: 1 }, input: { type: ['object', 'null'] } } },
      },
    ],
  },
);
const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const Message = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')], { hint: "Input should be 'user' or 'assistant'" }),
  content: Type.Union([Type.String(), Type.Array(Block)], { hint: 'Input should be a valid string or a list of content blocks' }),
});
const System = Type.Union([Type.String(), Type.Array(TextBlock)], { hint: 'Input should be a valid string or a list of text blocks' });
// a client tool is named; Anthropic's typed tools bring their own fields, and some have no name (the MCP
// connector's mcp_toolset names its server, the browser and computer toolsets nothing). A client tool's
// input_schema is an object: a string or a list went to a chat upstream as the function's parameters, refused
// there in its own words (null, or none, goes as a schema of no parameters)
const Tool = Type.Union(
  [
    Type.Object({ name: Type.String({ minLength: 1 }), input_schema: Type.Optional(Type.Union([Type.Object({}), Type.Null()])) }),
    Type.Object({ type: Type.String({ minLength: 1, not: { const: 'custom' } }) }),
  ],
  { hint: 'Input should be a tool with a name (its input_schema an object), or a typed tool such as mcp_toolset' },
);

/** What count_tokens takes: the prompt side of a request. */
const promptFields = {
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Message, { minItems: 1 }),
  system: Type.Optional(System),
  tools: Type.Optional(Type.Array(Tool)),
  // a forced tool names it: without the name chat upstreams get `{function: {}}` and refuse it in their own words
  tool_choice: Type.Optional(
    Type.Object(
      { type: Type.String() },
      { if: { properties: { type: { const: 'tool' } } }, then: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    ),
  ),
  thinking: Type.Optional(Type.Object({ type: Type.String() })),
};

export const CountTokensRequestSchema = Type.Object(promptFields);

export const MessagesRequestSchema = Type.Object({
  ...promptFields,
  max_tokens: Type.Integer({ minimum: 1, hint: 'Input should be a positive integer' }),
  stream: Type.Optional(Type.Boolean()),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  // -1 is "not set": LangChain's ChatAnthropic sends top_k: -1 and top_p: -1 by default, and the API takes them
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Literal(-1)], { hint: 'Input should be between 0 and 1 (or -1, not set)' })),
  top_k: Type.Optional(Type.Integer({ minimum: -1 })),
  stop_sequences: Type.Optional(Type.Array(Type.String())),
  metadata: Type.Optional(Type.Object({})),
});

export const messagesRequestValidator = compileRequestSchema(MessagesRequestSchema, 'anthropic');
export const countTokensRequestValidator = compileRequestSchema(CountTokensRequestSchema, 'anthropic');
