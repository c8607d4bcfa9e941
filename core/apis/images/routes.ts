import type { Request, Response, Router } from 'express';
import { ConfigError, NotFoundError } from '../../errors/gateway-error';
import { HOSTED_IMAGES_PATH, hostInlineImages } from './host-inline-images';
import { HostedImages } from './hosted-images';
import { resolveImagesSettings, tempDirProblem, type ResolvedImagesSettings } from './images-settings';
import { uploadErrors } from './multipart-errors';
import { discardBody, isMultipartFormData, readEditForm } from './read-edit-form';
import type { GatewayContext } from '../../pipeline/context';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS, sendError } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { refuseBody, runModelRequest, type ModelEndpointSpec } from '../../http/model-endpoint';
import { requireObjectBody } from '../../http/validate';
import { imageEditFormValidator, imagesRequestValidator } from './request-schema';

/** Where hosted images are reachable: the configured public base URL, else the one the client used. */
function baseUrlOf(req: Request, settings: ResolvedImagesSettings): string {
  return settings.publicBaseUrl ?? `${req.protocol}://${req.get('host')}`;
}

/** Where an image generation's key is and how its errors are written, for a refused body (app.ts too). */
export const GENERATIONS_CALLER: ModelEndpointSpec = { endpoint: 'images', format: 'images.generations', errors: OPENAI_ERRORS, credential: (req) => bearerToken(req.headers.authorization) };

export function installImagesRoutes(router: Router, services: GatewayServices): void {
  const spoolProblem = tempDirProblem(services.config.images.tempDir);
  if (spoolProblem) throw new ConfigError('images.tempDir', spoolProblem);
  const settings = resolveImagesSettings(services.config.images);
  const hosted = new HostedImages(services.store, services.clock, settings.urlTtlMs);

  async function finishResult(ctx: GatewayContext, req: Request): Promise<void> {
    const exchange = ctx.modelExchange;
    const result = exchange.result!;
    if (await hostInlineImages(result.body, exchange.body.response_format, hosted, baseUrlOf(req, settings))) result.rawBody = undefined;
  }

  const GENERATIONS: ModelEndpointSpec = { ...GENERATIONS_CALLER, finishResult };
  const credential = GENERATIONS_CALLER.credential;
  const EDITS: ModelEndpointSpec = { endpoint: 'images', format: 'images.edits', errors: OPENAI_ERRORS, credential, finishResult };

  router.post('/v1/images/generations', async (req, res) => {
    let body;
    try {
      body = requireObjectBody(req.body);
      imagesRequestValidator.check(body);
    } catch (err) {
      return refuseBody(services, GENERATIONS, req, res, err, req.body);
    }
    await runModelRequest(services, GENERATIONS, req, res, body);
  });

  router.post('/v1/images/edits', async (req, res) => {
    // Nothing of an upload is read (or spooled), nor its type judged, for a caller without a valid key: the
    // auth stage's check decides before the upload is read, and the pipeline's auth stage answers in the usual way.
    if (!(await services.auth.principalOf(credential(req)).catch(() => undefined))) {
      discardBody(req);
      return runModelRequest(services, EDITS, req, res, {});
    }
    if (!isMultipartFormData(req.headers['content-type'])) {
      discardBody(req);
      return refuseBody(services, EDITS, req, res, uploadErrors.notMultipart());
    }
    const upload = readEditForm(req, settings);
    try {
      await upload.ready;
      const body = upload.fields;
      // a form's values are strings: this schema takes a count as its digits too
      imageEditFormValidator.check(body);
      if (body.stream === 'true') body.stream = true;
      await runModelRequest(services, EDITS, req, res, body);
    } catch (err) {
      await upload.dispose();
      await refuseBody(services, EDITS, req, res, err, upload.fields);
    } finally {
      await upload.dispose();
    }
  });

  // No key: the unguessable, expiring file name is the credential (as with OpenAI's own image URLs).
  router.get(`${HOSTED_IMAGES_PATH}/:file`, async (req: Request, res: Response) => {
    const image = await hosted.get(String(req.params.file));
    if (!image) return sendError(res, new NotFoundError('This image does not exist or its URL has expired.', 'image_not_found'), OPENAI_ERRORS);
    const maxAge = Math.max(0, Math.floor((image.expiresAt - services.clock.now()) / 1000));
    res.status(200);
    res.setHeader('content-type', image.mimeType);
    res.setHeader('content-length', String(image.bytes.length));
    res.setHeader('cache-control', `private, max-age=${maxAge}`);
    res.setHeader('x-content-type-options', 'nosniff');
    res.end(image.bytes);
  });
}
