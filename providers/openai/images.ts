import { editUploadOf, InvalidRequestError, type HttpOperation, type ProviderTarget, type EditFields } from '../../core/plugins/sdk';

type HeadersFor = (target: ProviderTarget) => Record<string, string>;

/**
 * gpt-image models always answer `b64_json` and refuse `response_format` whatever its value (400 "Unknown
 * parameter"), so a client naming it (the AI SDK sends `b64_json` for any model not called gpt-image-*,
 * as a gateway alias is not) would fail. The answer is `b64_json` anyway, and the gateway serves `url`
 * itself (it hosts the inline image), so the field is left out of the upstream request; the client's
 * field stays in the request the gateway works from. Other models get it as the client sent it.
 */
const ALWAYS_INLINE_MODELS = /(^|\/)(chatgpt-image|gpt-image)/i;

function takesResponseFormat(upstreamModel: string): boolean {
  return !ALWAYS_INLINE_MODELS.test(upstreamModel);
}

/**
 * The OpenAI images API (and compatible servers): generations are JSON passed through with the model
 * name rewritten; edits are re-encoded as a new multipart body that streams the client's files through
 * (core/apis/images/edit-upload.ts). Responses pass through unchanged.
 */
export function openAiImageOperations(headersFor: HeadersFor): { generations: HttpOperation; edits: HttpOperation } {
  const generations: HttpOperation<Record<string, unknown>> = {
    toUpstream(request, target) {
      const body: Record<string, unknown> = { ...request, model: target.model.model };
      if (!takesResponseFormat(target.model.model)) delete body.response_format;
      return { path: '/images/generations', headers: headersFor(target), body: JSON.stringify(body) };
    },
    fromUpstream: (body) => body,
  };
  const edits: HttpOperation<EditFields> = {
    toUpstream(request, target) {
      const upload = editUploadOf(request);
      if (!upload) throw new InvalidRequestError('Image edits take a multipart/form-data body.', 'invalid_content_type');
      const keepFormat = takesResponseFormat(target.model.model);
      const { contentType, body } = upload.encode(request, target.model.model, (name) => keepFormat || name !== 'response_format');
      return { path: '/images/edits', headers: { ...headersFor(target), 'content-type': contentType }, body };
    },
    fromUpstream: (body) => body,
  };
  return { generations, edits };
}
