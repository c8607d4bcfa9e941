/**
 * The documented fields of an embeddings request (POST /v1/embeddings), checked as the OpenAI API checks
 * them; other fields pass through unchanged.
 */
import { Type } from '@sinclair/typebox';
import { compileRequestSchema, Nullable } from '../../http/request-schema';

const Tokens = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });
// OpenAI refuses empty text and an array that mixes texts with tokens: one kind per request
const Text = Type.String({ minLength: 1 });

export const EmbeddingsRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Union([Text, Type.Array(Text, { minItems: 1, maxItems: 2048 }), Tokens, Type.Array(Tokens, { minItems: 1, maxItems: 2048 })], {
    hint: 'must be a non-empty string, or a non-empty array of non-empty strings, of tokens, or of token arrays',
  }),
  encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64'), Type.Null()], { hint: "must be 'float' or 'base64'" })),
  dimensions: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  user: Type.Optional(Nullable(Type.String())),
});

export const embeddingsRequestValidator = compileRequestSchema(EmbeddingsRequestSchema, 'openai');
