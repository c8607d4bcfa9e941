import type { PiiEntity } from '../../../guardrails/pii-mask/recognizers';

/**
 * Text built to make a backtracking matcher slow on each recognizer: long runs of what a pattern
 * accepts, cut just before the part that would complete a match, so a naive pattern retries every way
 * of splitting the run. Shared by the linear-time test and the bench.
 */
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

export const ADVERSARIAL: Readonly<Record<PiiEntity, readonly ((bytes: number) => string)[]>> = {
  PHONE: [
    (n) => fill(`+1${'1'.repeat(45)}a `, n),
    (n) => fill(`00${'9'.repeat(45)}x `, n),
    (n) => fill(`(+1)(0)${'1'.repeat(40)}- `, n),
    (n) => fill(`0${'1'.repeat(40)}z `, n),
    (n) => `+1${fill('1 ', n)}`,
    (n) => fill('(030) 12 ', n),
    (n) => `+1 ${fill('1', n)} 1 1 1 1 1 1 1`,
  ],
  CREDIT_CARD: [(n) => fill(`4111${' 1'.repeat(30)}x `, n), (n) => fill('4111 ', n), (n) => `4${'1'.repeat(n)}`],
  EMAIL: [
    (n) => fill('a.', n),
    (n) => `x@${fill('a.', n)}`,
    (n) => fill('a@a.a.', n),
    (n) => `a@${fill('a-', n)}`,
    (n) => fill(`${'é'.repeat(30)}@${'b'.repeat(70)}.c `, n),
  ],
  US_SSN: [(n) => fill('123-45-678 ', n), (n) => fill('ssn 123456789', n)],
  IBAN: [(n) => fill('DE89 3704 0044 0532 0130 0', n), (n) => fill('DE12', n)],
  IP_ADDRESS: [(n) => fill('1:', n), (n) => fill('1.1.1.1.', n), (n) => fill('a:b:c:d:e:f:1:2:3 ', n), (n) => fill('v 10.0.0.1 ', n), (n) => fill(` 1:1:%${'a'.repeat(50)}:`, n)],
  SECRET: [
    (n) => fill('-----BEGIN RSA PRIVATE KEY-----\n', n),
    (n) => `-----BEGIN ${fill('A ', n)}`,
    (n) => fill('sk-', n),
    (n) => fill('eyJhbGciOiJIUzI1NiJ9.eyJ', n),
    (n) => fill('authorization: bearer ', n),
    (n) => fill('aws_secret_access_key = ', n),
  ],
};

/** Ordinary prose with a few values of each kind, for the per-KB cost on honest text. */
export function ordinaryText(bytes: number): string {
  return fill(
    'Hello team, please call +44 20 7946 0958 or (415) 555-2671 about order 1234 from jane.roe@example.org. ' +
      'The card 4111 1111 1111 1111 was charged, IBAN DE89 3704 0044 0532 0130 00, server 10.0.0.1, version 1.2.3. ' +
      'Meeting on 05-06-2023 at 12:30, see ticket #5521 and the notes below for the details we agreed on. ',
    bytes,
  );
}
