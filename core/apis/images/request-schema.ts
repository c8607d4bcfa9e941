/**
 * The documented fields of an image request, generation (JSON) and edit (multipart), checked as the
 * OpenAI API checks them. A multipart form has only text values, so an edit's numbers and booleans come as
 * their text; a JSON generation must send them as JSON numbers and booleans. Other fields (style,
 * background, output_format, ...) pass through unchanged.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { compileRequestSchema, Nullable } from '../../http/request-schema';

/**
 * Any `<width>x<height>` with both sides above zero: OpenAI's gpt-image-2 takes arbitrary sizes and other
 * providers have their own lists, so only a size no model can make is refused here.
 */
const Size = Type.Union([Type.String({ pattern: '^([1-9][0-9]{0,4}x[1-9][0-9]{0,4}|auto)$' }), Type.Null()], { hint: "expected '<width>x<height>', e.g. '1024x1024'" });

// every value OpenAI documents across its image models (dall-e-3's standard/hd, gpt-image's low..auto):
// which model takes which is left to the upstream
const Quality = Type.Union([Type.Literal('standard'), Type.Literal('hd'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('auto'), Type.Null()], {
  hint: "expected 'standard', 'hd', 'low', 'medium', 'high' or 'auto'",
});

function imagesSchema(form: boolean): TSchema {
  const fromText = (json: TSchema, pattern: string) => (form ? [json, Type.String({ pattern })] : [json]);
  return Type.Object({
    model: Type.String({ minLength: 1 }),
    prompt: Type.String({ minLength: 1 }),
    n: Type.Optional(Type.Union([...fromText(Type.Integer({ minimum: 1, maximum: 10 }), '^([1-9]|10)$'), Type.Null()], { hint: 'expected a positive integer' })),
    size: Type.Optional(Size),
    quality: Type.Optional(Quality),
    stream: Type.Optional(Type.Union([...fromText(Type.Boolean(), '^(true|false)$'), Type.Null()], { hint: 'expected a boolean' })),
    partial_images: Type.Optional(Type.Union([...fromText(Type.Integer({ minimum: 0, maximum: 3 }), '^[0-3]$'), Type.Null()], { hint: 'expected an integer from 0 to 3' })),
    response_format: Type.Optional(Type.Union([Type.Literal('url'), Type.Literal('b64_json'), Type.Null()], { hint: "expected 'url' or 'b64_json'" })),
    user: Type.Optional(Nullable(Type.String())),
  });
}

export const imagesRequestValidator = compileRequestSchema(imagesSchema(false), 'openai');
/** An edit's multipart fields: numbers and booleans as their text. */
export const imageEditFormValidator = compileRequestSchema(imagesSchema(true), 'openai');
