import { expect } from 'chai';
import type { GatewayError } from '../../../core/errors/gateway-error';
import { PreGuardrailStage } from '../../../core/stages/pre-guardrail';
import { chatContext, guardedModelTraffic } from './guardrail-fixtures';

describe('core/stages/pre-guardrail (real pii-mask and block engines, real model traffic strategy)', () => {
  it('masks the request before the call and records which guardrail acted', async () => {
    const stage = new PreGuardrailStage(await guardedModelTraffic());
    const ctx = chatContext('mail me at jane@example.com');
    await stage.run(ctx);
    expect(ctx.model!.body.messages[0].content).to.equal('mail me at [EMAIL]');
    expect(ctx.guardrails.map((g) => [g.id, g.phase, g.verdict, g.findings ?? []])).to.deep.equal([
      ['mask-pii', 'pre', 'mask', ['EMAIL']],
      ['no-falcon', 'pre', 'allow', []],
    ]);
  });

  it('blocks a request with a blocked phrase: 400 guardrail_blocked', async () => {
    const stage = new PreGuardrailStage(await guardedModelTraffic());
    const err = await (async () => stage.run(chatContext('status of Project Falcon?')))().then(
      () => expect.fail('should be blocked'),
      (e: GatewayError) => e,
    );
    expect([err.status, err.code]).to.deep.equal([400, 'guardrail_blocked']);
  });
});
