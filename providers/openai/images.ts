import type { HttpOperation, ProviderTarget } from '../../core/plugins/contracts';
import { editUploadOf, type EditFields } from '../../core/images/edit-upload';
import { InvalidRequestError } from '../../core/errors/gateway-error';

type HeadersFor = (target: ProviderTarget) => Record<string, string>;

/**
 * The OpenAI images API (and compatible servers): generations are JSON passed through with the model
 * name rewritten; edits are re-encoded as a new multipart body that streams the client's files through
 * (core/images/edit-upload.ts). Responses pass through unchanged.
 */
export function openAiImageOperations(headersFor: HeadersFor): { generations: HttpOperation; edits: HttpOperation } {
  const generations: HttpOperation<Record<string, unknown>> = {
    toUpstream: (request, target) => ({
      path: '/images/generations',
      headers: headersFor(target),
      body: JSON.stringify({ ...request, model: target.model.model }),
    }),
    fromUpstream: (body) => body,
    fromUpstreamEvent: (frame) => frame,
  };
  const edits: HttpOperation<EditFields> = {
    toUpstream(request, target) {
      const upload = editUploadOf(request);
      if (!upload) throw new InvalidRequestError('Image edits take a multipart/form-data body.', 'invalid_content_type');
      const { contentType, body } = upload.encode(request, target.model.model);
      return { path: '/images/edits', headers: { ...headersFor(target), 'content-type': contentType }, body };
    },
    fromUpstream: (body) => body,
    fromUpstreamEvent: (frame) => frame,
  };
  return { generations, edits };
}
