import { InvalidRequestError, NotFoundError } from '../errors/gateway-error';

export function modelNotFound(model: string): NotFoundError {
  return new NotFoundError(`The model \`${model}\` does not exist or you do not have access to it.`, 'model_not_found', { param: 'model' });
}

export function modelKindMismatch(model: string, kind: string, endpoint: string): InvalidRequestError {
  return new InvalidRequestError(`The model \`${model}\` is a${kind === 'image' || kind === 'embedding' ? 'n' : ''} ${kind} model and cannot be used on the ${endpoint} endpoint.`, 'model_kind_mismatch', { param: 'model' });
}

export function unsupportedOperation(model: string, format: string): InvalidRequestError {
  return new InvalidRequestError(`The model \`${model}\` does not support the ${format} API.`, 'unsupported_operation', { param: 'model' });
}
