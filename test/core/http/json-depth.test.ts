import { expect } from 'chai';
import { nestsDeeperThan } from '../../../core/http/json-depth';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('nestsDeeperThan (the JSON depth limit, before parsing)', () => {
  it('counts arrays and objects, and stops at the limit', () => {
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 4)).to.equal(false);
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 3)).to.equal(true);
    expect(nestsDeeperThan(bytes('[[],[],[[]]]'), 3)).to.equal(false);
  });

  it('skips brackets inside strings, whatever the escapes before the closing quote', () => {
    // "\\" ends the string (an escaped backslash), "\"" does not (an escaped quote)
    expect(nestsDeeperThan(bytes(JSON.stringify({ a: '[[[[\\', b: '"[[[[', c: '\\"{{{{' })), 1)).to.equal(false);
    expect(nestsDeeperThan(bytes(JSON.stringify(['\\', [[1]]])), 2)).to.equal(true);
    expect(nestsDeeperThan(bytes(JSON.stringify({ 'ünïcödé [': '€ {{{{ 𝄞' })), 1)).to.equal(false);
  });

  it('leaves an unterminated string to the parser', () => {
    expect(nestsDeeperThan(bytes('["[[[[[['), 2)).to.equal(false);
  });
});
