import { expect } from 'chai';
import { LiteralSet } from '../../../core/errors/literal-set';
import { SecretSet } from '../../../core/errors/scrub';

/** What cover() must answer, the slow way: every occurrence of every string, overlapping ones joined. */
function expected(values: string[], text: string): number[] {
  const covered = new Array<boolean>(text.length).fill(false);
  for (const v of values) for (let at = text.indexOf(v); at !== -1; at = text.indexOf(v, at + 1)) covered.fill(true, at, at + v.length);
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (!covered[i]) continue;
    if (out.length > 0 && out[out.length - 1] === i) out[out.length - 1] = i + 1;
    else out.push(i, i + 1);
  }
  return out;
}

/** A small alphabet, so strings overlap and repeat in the text often. */
function randomText(random: () => number, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += 'abc'[Math.floor(random() * 3)];
  return s;
}

function seeded(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

describe('core/errors/literal-set', () => {
  for (const count of [3, 200]) {
    it(`finds every occurrence of ${count} strings, overlapping ones joined (against a slow reference)`, () => {
      const random = seeded(count);
      for (let round = 0; round < 200; round++) {
        const values = [...new Set(Array.from({ length: count }, () => randomText(random, 8 + Math.floor(random() * 6))))];
        // the text is made of pieces of the strings and noise, so it holds occurrences, overlaps included
        let text = '';
        while (text.length < 300) text += random() < 0.3 ? values[Math.floor(random() * values.length)] : randomText(random, 1 + Math.floor(random() * 5));
        expect(new LiteralSet(values, 8).cover(text), `round ${round}`).to.deep.equal(expected(values, text));
      }
    });
  }

  it('refuses a string shorter than its window (it could never be found)', () => {
    expect(() => new LiteralSet(['short'], 8)).to.throw(RangeError);
  });
});

describe('core/errors/scrub: SecretSet', () => {
  it('takes out two secrets that overlap in the text whole, leaving no part of either', () => {
    const secrets = new SecretSet();
    secrets.group().replace(['alpha-secret-12', 'secret-12345678']);
    expect(secrets.scrub('x alpha-secret-12345678 y')).to.equal('x [redacted] y');
  });

  it('finds a secret among 5,000, and its JSON-escaped form', () => {
    const secrets = new SecretSet();
    const values = Array.from({ length: 5000 }, (_, i) => `tok_${i}_${'k'.repeat(12)}`);
    values.push('pass"word\\with-quotes');
    secrets.group().replace(values);
    const line = JSON.stringify({ a: 'tok_4321_kkkkkkkkkkkk', b: 'pass"word\\with-quotes', c: 'tok_99999_kkkkkkkkkkkk' });
    expect(secrets.scrub(line)).to.equal('{"a":"[redacted]","b":"[redacted]","c":"tok_99999_kkkkkkkkkkkk"}');
  });
});
