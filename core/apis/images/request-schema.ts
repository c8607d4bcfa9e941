/**
 * The documented fields of an image request, generation (JSON) and edit (multipart), checked as the
 * OpenAI API checks them. A multipart form has only text values, so a number may come as its digits.
 * Other fields (quality, style, background, output_format, ...) pass through unchanged.
 */
import { Type } from '@sinclair/typebox';
import { compileRequestSchema, Nullable } from '../../http/request-schema';

const Count = Type.Union([Type.Integer({ minimum: 1, maximum: 10 }), Type.String({ pattern: '^([1-9]|10)$' }), Type.Null()], { hint: 'expected a positive integer' });

export const ImagesRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  prompt: Type.String({ minLength: 1 }),
  n: Type.Optional(Count),
  size: Type.Optional(Type.Union([Type.String({ pattern: '^([0-9]{1,5}x[0-9]{1,5}|auto)$' }), Type.Null()], { hint: "expected '<width>x<height>', e.g. '1024x1024'" })),
  response_format: Type.Optional(Type.Union([Type.Literal('url'), Type.Literal('b64_json'), Type.Null()], { hint: "expected 'url' or 'b64_json'" })),
  user: Type.Optional(Nullable(Type.String())),
});

export const imagesRequestValidator = compileRequestSchema(ImagesRequestSchema, 'openai');
