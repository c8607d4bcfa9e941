import { creditCardRecognizer } from './credit-card';
import { emailRecognizer } from './email';
import { ibanRecognizer } from './iban';
import { ipAddressRecognizer } from './ip-address';
import { phoneRecognizer } from './phone';
import { secretRecognizer } from './secret';
import type { PiiEntity, Recognizer } from './types';
import { usSsnRecognizer } from './us-ssn';

export * from './types';

/** One recognizer per entity type. */
export const RECOGNIZERS: Readonly<Record<PiiEntity, Recognizer>> = {
  EMAIL: emailRecognizer,
  PHONE: phoneRecognizer,
  CREDIT_CARD: creditCardRecognizer,
  US_SSN: usSsnRecognizer,
  IBAN: ibanRecognizer,
  IP_ADDRESS: ipAddressRecognizer,
  SECRET: secretRecognizer,
};
