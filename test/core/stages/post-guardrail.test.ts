import { expect } from 'chai';
import { GatewayContext } from '../../../core/pipeline/context';
import { PostGuardrailStage } from '../../../core/stages/post-guardrail';
import { principal } from '../routing/routing-fixtures';
import { chatContext, runner } from './guardrail-fixtures';

describe('core/stages/post-guardrail (real pii-mask engine)', () => {
  it('masks the model answer after the call and an MCP tool result', async () => {
    const stage = new PostGuardrailStage(await runner());
    const ctx = chatContext('hi');
    ctx.model!.result = { status: 200, headers: {}, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'call 555-867-5309 or jane@example.com' }, finish_reason: 'stop' }] } };
    await stage.run(ctx);
    expect((ctx.model!.result!.body as any).choices[0].message.content).to.equal('call [PHONE] or [EMAIL]');

    const mcp = new GatewayContext('mcp', 'mcp', Date.now(), { headers: {} }, new AbortController().signal);
    mcp.principal = principal();
    mcp.mcp = { method: 'tools/call', toolName: 'crm-lookup', result: { content: [{ type: 'text', text: 'owner: jane@example.com' }] } };
    await stage.run(mcp);
    expect(mcp.mcp.result).to.deep.equal({ content: [{ type: 'text', text: 'owner: [EMAIL]' }] });
  });
});
