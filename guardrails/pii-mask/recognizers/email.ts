import { scan, type Recognizer } from './types';

/**
 * Addresses of the usual shape: a dotted local part, a domain with at least one dot and a letter TLD.
 * The lookbehind keeps us from starting inside a longer token; a trailing sentence dot is not taken.
 */
const EMAIL = /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}_%+-]+(?:\.[\p{L}\p{N}_%+-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,24}(?![\p{L}\p{N}-])/gu;

/** `icon@2x.png`: the retina-image naming convention, not an address. */
const RETINA_IMAGE = /@\d(?:\.\d)?x\.(?:png|jpe?g|gif|webp|svg|avif)$/i;

export const emailRecognizer: Recognizer = {
  entity: 'EMAIL',
  priority: 50,
  find: (text) => scan('EMAIL', EMAIL, text, (m) => !RETINA_IMAGE.test(m[0])),
};
