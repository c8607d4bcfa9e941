import { expect } from 'chai';
import piiMask from '../../../guardrails/pii-mask';
import { createEngine, input, never } from '../harness';

const CARD = '4111 1111 1111 1111';
const EMAIL = 'jane.roe@example.org';

describe('pii-mask engine', () => {
  it('masks values with typed placeholders and keeps every other character as it was', async () => {
    const engine = await createEngine(piiMask, {});
    const text = `  Hi!\n\tMail ${EMAIL}, card ${CARD}; IP 10.1.2.3 — ünïcødé stays.  `;
    const verdict = await engine.check(input([text]), never);
    expect(verdict).to.deep.equal({
      action: 'mask',
      segments: [{ id: 0, text: '  Hi!\n\tMail [EMAIL], card [CREDIT_CARD]; IP [IP_ADDRESS] — ünïcødé stays.  ' }],
      findings: ['CREDIT_CARD', 'EMAIL', 'IP_ADDRESS'],
    });
  });

  it('returns only the segments it changed, by id', async () => {
    const engine = await createEngine(piiMask, {});
    const verdict = await engine.check(input(['nothing here', `ssn 536-22-1234`, 'still nothing']), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 1, text: 'ssn [US_SSN]' }], findings: ['US_SSN'] });
  });

  it('allows text without personal data', async () => {
    const engine = await createEngine(piiMask, {});
    expect(await engine.check(input(['Version 1.2.3.4 shipped on 2024-03-15, order 123456789012.']), never)).to.deep.equal({ action: 'allow' });
  });

  it('looks only for the configured entities', async () => {
    const engine = await createEngine(piiMask, { entities: ['EMAIL'] });
    const verdict = await engine.check(input([`${EMAIL} ${CARD}`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: `[EMAIL] ${CARD}` }], findings: ['EMAIL'] });
  });

  it('redacts without naming the type when replacement is "redact"', async () => {
    const engine = await createEngine(piiMask, { replacement: 'redact' });
    const verdict = await engine.check(input([`a ${EMAIL} b`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'a [REDACTED] b' }], findings: ['EMAIL'] });
  });

  it('hashes a value to the same keyed token every time, never the value itself', async () => {
    const engine = await createEngine(piiMask, { replacement: 'hash', hashKey: 'a-test-key-of-16+chars' });
    const verdict = await engine.check(input([`${EMAIL} and ${EMAIL} and other@example.org`]), never);
    expect(verdict.action).to.equal('mask');
    const text = verdict.action === 'mask' ? verdict.segments[0].text : '';
    const tokens = text.match(/\[EMAIL:[0-9a-f]{10}\]/g) ?? [];
    expect(tokens).to.have.length(3);
    expect(tokens[0]).to.equal(tokens[1]);
    expect(tokens[2]).to.not.equal(tokens[0]);
    expect(text).to.not.include('jane');
  });

  it('blocks when an entity with action "block" is present, naming its type but not its value', async () => {
    const engine = await createEngine(piiMask, { actions: { SECRET: 'block' } });
    const key = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0f';
    const verdict = await engine.check(input([`my email ${EMAIL}`, `use ${key}`], { phase: 'pre' }), never);
    expect(verdict).to.deep.equal({
      action: 'block',
      code: 'guardrail_blocked',
      reason: 'The request contains a secret (API key, token or private key), which is not allowed.',
    });
    expect(JSON.stringify(verdict)).to.not.include('sk-proj');
  });

  it('says "tool result" when it blocks MCP traffic after the call', async () => {
    const engine = await createEngine(piiMask, { actions: { US_SSN: 'block' } });
    const verdict = await engine.check(input(['536-22-1234'], { traffic: 'mcp', target: 'hr/lookup' }), never);
    expect(verdict).to.deep.include({ action: 'block', reason: 'The tool result contains a US social security number, which is not allowed.' });
  });

  it('resolves overlapping matches to the longest value', async () => {
    const engine = await createEngine(piiMask, {});
    // the IBAN's digits contain phone-like and card-like runs; only the IBAN is reported
    const verdict = await engine.check(input(['pay DE89 3704 0044 0532 0130 00 now']), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'pay [IBAN] now' }], findings: ['IBAN'] });
  });

  it('masks a whole PEM private key block, keeping the lines around it', async () => {
    const engine = await createEngine(piiMask, {});
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\nq7BFUpkGp3+LQmlQ\n-----END PRIVATE KEY-----';
    const verdict = await engine.check(input([`before\n${pem}\nafter`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'before\n[SECRET]\nafter' }], findings: ['SECRET'] });
  });

  it('masks an encrypted PEM private key cut off before its END line, its Proc-Type and DEK-Info headers and body', async () => {
    const engine = await createEngine(piiMask, { entities: ['SECRET'] });
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\nMIIEowIBAAKCAQEAq7BFUpkGp3+LQmlQ\nq7BFUpkGp3+LQmlQ';
    const verdict = await engine.check(input([`key: ${pem}`]), never);
    expect(verdict).to.deep.equal({ action: 'mask', segments: [{ id: 0, text: 'key: [SECRET]' }], findings: ['SECRET'] });
  });

  it('rejects unknown entities and options at boot with the option path', async () => {
    let error: Error | undefined;
    try {
      await createEngine(piiMask, { entities: ['EMAIL', 'PASSPORT'] }, 'guardrails[2].options');
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).to.equal('PluginError');
    expect(error?.message).to.match(/^guardrails\[2\]\.options: .*guardrails\[2\]\.options\.entities\[1\]/);
    let unknown: Error | undefined;
    try {
      await createEngine(piiMask, { replacment: 'redact' });
    } catch (err) {
      unknown = err as Error;
    }
    expect(unknown?.message).to.match(/^guardrails\[0\]\.options/).and.to.include('replacment');
  });
});
