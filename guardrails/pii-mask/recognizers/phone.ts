import { digitsOf, scan, type Recognizer } from './types';

/**
 * Phone numbers in the formats people write:
 * - international: `+44 20 7946 0958`, `(+44) 20 7946 0958`, `+1 (415) 555-2671`, `+4930123456`, `0044 20 7946 0958` (E.164
 *   allows at most 15 digits, and we want at least 8);
 * - North American: `(415) 555-2671`, `415-555-2671`, `415.555.2671`, `1-800-555-0199`;
 * - national numbers with a trunk 0 and separators: `020 7946 0958`, `06 12 34 56 78`, `(030) 1234-5678`.
 * Unseparated national digit runs are left alone: they are more often ids than phones. Dates and
 * version numbers fail the digit-count, separator and date rules below, and a number that continues a
 * digit group ("5500 0000 0000", the middle of an IBAN) is not read as starting a phone.
 */
// Linear time: a digit group may follow the previous one without a separator only after the country
// code or a closing parenthesis. (Optional separators between groups of \d{1,6} let a backtracking
// matcher try every split of a long digit run: about 200 ms per KB of crafted digits.) A run longer
// than E.164 allows still matches here and is then refused by its digit count.
const INTERNATIONAL = /(?<![\w+.-]|\d[ .-])(?:(?:\+|00)[1-9]\d{0,2}|\(\+[1-9]\d{0,2}\))(?:[ .-]?\(0\))?(?:[ .-]?\(\d{1,4}\)|[ .-]?\d+)(?:[ .-]?\(\d{1,4}\)|[ .-]\d+|(?<=\))\d+){0,6}(?![\w]|[.-]\d)/g;
// The exchange may start with any digit: real ones never start with 0 or 1, but example numbers
// ("555-123-4567") do, and they are what people paste; the area code still rules out "123-456-7890".
const NANP = /(?<![\w+.-]|\d[ .-])(?:1[ .-])?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-])\d{3}[ .-]\d{4}(?![\w]|[.-]\d)/g;
const TRUNK = /(?<![\w+.-]|\d[ .-])(?:\(0[1-9]\d{0,3}\)|0[1-9]\d{0,3})(?:[ .-]\d{2,8}){1,4}(?![\w]|[.-]\d)/g;
const DATE_START = /^\(?\d{1,2}[./ -]\d{1,2}[./ -](?:1[89]|20)\d{2}(?!\d)/;

/** Mixed separators ("05-06-2023 12") read as a date and a time, unless parentheses set off an area code. */
function consistentSeparators(candidate: string): boolean {
  if (candidate.includes('(')) return true;
  return new Set(candidate.match(/[ .-]/g) ?? []).size <= 1;
}

/** Try the candidate, then drop trailing groups: "+44 20 7946 0958 2024" is a phone followed by a year. */
function longestValid(candidate: string, valid: (s: string) => boolean): number {
  let s = candidate;
  for (;;) {
    if (valid(s)) return s.length;
    const cut = s.search(/[ .-]\(?\d+\)?$/);
    if (cut <= 0) return 0;
    s = s.slice(0, cut);
  }
}

function international(s: string): boolean {
  const n = digitsOf(s.replace('(0)', '')).length - (s.startsWith('00') ? 2 : 0);
  if (n < 8 || n > 15) return false;
  // "0012 3456" is more likely a number than a dialled prefix: the 00 form needs real grouping.
  return !s.startsWith('00') || (s.match(/[ .-]/g) ?? []).length >= 2;
}

function trunk(s: string): boolean {
  const n = digitsOf(s).length;
  return n >= 9 && n <= 12 && consistentSeparators(s) && !DATE_START.test(s);
}

function shrinking(entityPattern: RegExp, valid: (s: string) => boolean) {
  return (text: string) =>
    scan('PHONE', entityPattern, text, (m) => {
      const len = longestValid(m[0], valid);
      return len > 0 ? [m.index, m.index + len] : false;
    });
}

const findInternational = shrinking(INTERNATIONAL, international);
const findTrunk = shrinking(TRUNK, trunk);

export const phoneRecognizer: Recognizer = {
  entity: 'PHONE',
  priority: 40,
  find: (text) => [
    ...findInternational(text),
    ...scan('PHONE', NANP, text, (m) => consistentSeparators(m[0]) && !DATE_START.test(m[0])),
    ...findTrunk(text),
  ],
};
