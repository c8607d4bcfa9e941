import type { PiiMatch, Recognizer } from './types';

/**
 * IBANs: a country code, two check digits and the national account number, written compact or in
 * groups of four. A candidate must have its country's exact length and pass the ISO 7064 mod-97 check,
 * so "DE00 1234 ..." style lookalikes are left alone.
 */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21,
  CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18,
  FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26,
  IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24,
  ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29,
  PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23,
  ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

const START = /(?<![\p{L}\p{N}])([A-Za-z]{2})(\d{2})/gu;

export function ibanChecksumValid(compact: string): boolean {
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged.toUpperCase()) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

const isAlnum = (ch: string | undefined) => ch !== undefined && /[A-Za-z0-9]/.test(ch);

/** Read `length` alphanumerics from `from`, allowing single spaces between them; -1 if that fails. */
function readIban(text: string, from: number, length: number): { end: number; compact: string } | null {
  let compact = '';
  let i = from;
  while (compact.length < length) {
    const ch = text[i];
    if (isAlnum(ch)) {
      compact += ch;
      i++;
    } else if (ch === ' ' && compact.length > 0 && isAlnum(text[i + 1])) {
      i++;
    } else {
      return null;
    }
  }
  // the IBAN must end here, not run on into a longer token
  return isAlnum(text[i]) ? null : { end: i, compact };
}

export const ibanRecognizer: Recognizer = {
  entity: 'IBAN',
  priority: 90,
  find(text) {
    const out: PiiMatch[] = [];
    START.lastIndex = 0;
    for (let m = START.exec(text); m !== null; m = START.exec(text)) {
      const country = m[1].toUpperCase();
      const length = Object.hasOwn(IBAN_LENGTHS, country) ? IBAN_LENGTHS[country] : undefined;
      if (!length) continue;
      const read = readIban(text, m.index, length);
      if (read && ibanChecksumValid(read.compact)) {
        out.push({ entity: 'IBAN', start: m.index, end: read.end });
        START.lastIndex = read.end;
      }
    }
    return out;
  },
};
