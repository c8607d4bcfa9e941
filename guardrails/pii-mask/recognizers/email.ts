import { scan, type Recognizer } from './types';

/**
 * Addresses of the usual shape: a dotted local part, a domain with at least one dot and a letter TLD.
 * The lookbehind keeps us from starting inside a longer token; a trailing sentence dot is not taken.
 * The local part is one run of its characters and dots up to the `@`, the lookahead refusing a run with
 * two dots in a row or a dot before the `@`: the same addresses as `x+(?:\.x+)*`, but V8 keeps one
 * backtrack entry per repetition of a group, so a few million dotted characters (`1.1.1.…`)
 * overflowed its stack ("Maximum call stack size exceeded") and the text could not be checked; a loop
 * over one character class backtracks without a stack.
 */
const EMAIL = /(?<![\p{L}\p{N}._%+-])(?![\p{L}\p{N}._%+-]*\.[.@])[\p{L}\p{N}_%+-][\p{L}\p{N}._%+-]*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,24}(?![\p{L}\p{N}-])/gu;

/** `icon@2x.png`: the retina-image naming convention, not an address. */
const RETINA_IMAGE = /@\d(?:\.\d)?x\.(?:png|jpe?g|gif|webp|svg|avif)$/i;

export const emailRecognizer: Recognizer = {
  entity: 'EMAIL',
  priority: 50,
  find: (text) => scan('EMAIL', EMAIL, text, (m) => !RETINA_IMAGE.test(m[0])),
};
