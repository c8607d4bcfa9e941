import { scan, type Recognizer } from './types';

/**
 * US social security numbers. With separators (`123-45-6789`, `123 45 6789`) the shape is enough; a bare
 * nine-digit run counts only when "SSN" or "social security" is written just before it. The SSA never
 * issues area 000, 666 or 900-999, group 00 or serial 0000.
 */
const SEPARATED = /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d]|-\d)/g;
const BARE = /(?<![\d-])(\d{3})(\d{2})(\d{4})(?!\d)/g;
const CONTEXT = /(?:\bssn|social\s+security(?:\s+(?:number|no\.?|#))?)\s*(?:is|:|#|=|-)?\s*$/i;

export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  if (a === 0 || a === 666 || a >= 900) return false;
  // Numbers voided after being printed in ads (078-05-1120, 219-09-9999) are still masked: they are
  // the examples people paste most, and SSN-shaped text left alone would be read as a phone number.
  return group !== '00' && serial !== '0000';
}

export const usSsnRecognizer: Recognizer = {
  entity: 'US_SSN',
  priority: 70,
  find: (text) => [
    ...scan('US_SSN', SEPARATED, text, (m) => ssnValid(m[1], m[3], m[4])),
    ...scan('US_SSN', BARE, text, (m) => ssnValid(m[1], m[2], m[3]) && CONTEXT.test(text.slice(Math.max(0, m.index - 40), m.index))),
  ],
};
