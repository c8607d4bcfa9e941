import { digitsOf, scan, type Recognizer } from './types';

/**
 * Payment card numbers: 13 to 19 digits, either unbroken or in groups split by one kind of separator
 * (space or dash), starting with a major-network digit (2-6) and passing the Luhn check. Random digit
 * runs pass Luhn one time in ten, so the grouping and prefix rules matter for precision.
 */
// The first run is unbroken and every later group needs its separator, so a long digit run is read
// one way only (optional separators between groups would let a backtracking matcher try every split).
const CANDIDATE = /(?<![\d.,-])\d{4,19}(?:[ -]\d{2,7}){0,5}(?![\d]|[.,-]\d)/g;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function wellGrouped(candidate: string): boolean {
  const separators = new Set(candidate.match(/[ -]/g) ?? []);
  if (separators.size > 1) return false;
  if (separators.size === 0) return true;
  const groups = candidate.split(/[ -]/);
  // 4-4-4-4(-3), Amex 4-6-5, Diners 4-6-4: the first group is always four digits.
  return groups[0].length === 4 && groups.slice(1).every((g) => g.length >= 3 && g.length <= 6) && groups.length >= 3;
}

function isCard(candidate: string): boolean {
  const digits = digitsOf(candidate);
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && wellGrouped(candidate) && luhnValid(digits);
}

export const creditCardRecognizer: Recognizer = {
  entity: 'CREDIT_CARD',
  priority: 80,
  find: (text) =>
    scan('CREDIT_CARD', CANDIDATE, text, (m) => {
      // The candidate may have swallowed a number written after the card ("... 1111 and 2024"):
      // drop trailing groups until the rest is a card.
      let candidate = m[0];
      while (candidate.length >= 13) {
        if (isCard(candidate)) return [m.index, m.index + candidate.length];
        const cut = candidate.search(/[ -]\d+$/);
        if (cut < 0) return false;
        candidate = candidate.slice(0, cut);
      }
      return false;
    }),
};
