/** The golden error table of a provider: each upstream error answer and the GatewayError it becomes. */
import { expect } from 'chai';
import type { GatewayError } from '../../core/errors/gateway-error';
import { readFixture } from '../support/fixtures';

interface ErrorCase {
  case: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  expected: { status: number; code: string; message: string; retryAfter?: string };
}

export function describeErrorGoldens(folder: string, toError: (status: number, body: unknown, headers: Record<string, string>) => GatewayError): void {
  describe(`${folder} provider: upstream errors -> gateway errors (golden file)`, () => {
    for (const c of readFixture<ErrorCase[]>(folder, 'errors.json')) {
      it(c.case, () => {
        const err = toError(c.status, c.body, c.headers);
        const seen: ErrorCase['expected'] = { status: err.status, code: err.code, message: err.message };
        if (err.headers['retry-after'] !== undefined) seen.retryAfter = err.headers['retry-after'];
        expect(seen).to.deep.equal(c.expected);
      });
    }
  });
}
