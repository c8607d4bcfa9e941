import { expect } from 'chai';
import { scrubCredentials, scrubMessage } from '../../../core/errors/scrub';

describe('core/errors/scrub', () => {
  it('takes URLs, key-shaped values and bearer tokens out of an upstream message', () => {
    const message = 'Incorrect API key provided: sk-proj-abcdef123456 for https://user:pw@internal.example/v1 (Authorization: Bearer eyJhbGciOi.x.y)';
    expect(scrubMessage(message)).to.equal('Incorrect API key provided: [redacted] for [url] (Authorization: [redacted])');
  });

  it('takes out credentials the gateway fetched itself by their shape: temporary AWS key ids and Google access tokens', () => {
    const message = 'The security token included in the request is invalid: ASIAQEXAMPLE12345678 (token ya29.a0AfB_byC-example_token.part2)';
    expect(scrubMessage(message)).to.equal('The security token included in the request is invalid: [redacted] (token [redacted])');
  });

  it('takes out every configured secret it is given, wherever it appears', () => {
    expect(scrubMessage('token hunter2-long was refused; hunter2-long again', ['hunter2-long'])).to.equal('token [redacted] was refused; [redacted] again');
    // too short to be a secret worth matching: replacing it would mangle ordinary words
    expect(scrubMessage('abc is fine', ['abc'])).to.equal('abc is fine');
  });

  it('caps a long message at 1000 characters', () => {
    const out = scrubMessage('x'.repeat(5000));
    expect(out).to.have.length(1001);
    expect(out.endsWith('…')).to.equal(true);
  });
  it('scrubs a token of millions of characters (an upstream message before it is cut short) rather than overflowing the stack', () => {
    const run = 'a'.repeat(6_000_000);
    for (const token of [`sk-${run}`, `eyJabcdefgh.eyJ${run}.sig`, `ya29.${run}`, `AIza${run}`, `ghp_${run}`, `eyJabcdefgh.eyJabcdefgh${'.'.repeat(3_000_000)}`]) {
      expect(scrubMessage(`upstream said ${token} end`), token.slice(0, 12)).to.equal('upstream said [redacted] end');
      expect(scrubCredentials(`${token} end`), token.slice(0, 12)).to.equal('[redacted] end');
    }
  });
});
