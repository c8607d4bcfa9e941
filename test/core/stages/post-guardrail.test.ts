import { expect } from 'chai';
import { GatewayContext } from '../../../core/pipeline/context';
import { PostGuardrailStage } from '../../../core/stages/post-guardrail';
import { startMcpHarness } from '../../support/mcp-harness';
import { principal } from '../routing/routing-fixtures';
import { chatContext, runner } from './guardrail-fixtures';
import { mcpTraffic, modelTraffic, signedIn, strategies } from './traffic-fixtures';

describe('core/stages/post-guardrail (real pii-mask engine, real model and MCP traffic strategies)', () => {
  it('masks the model answer after the call and an MCP tool result', async () => {
    const guardrails = await runner();
    const harness = await startMcpHarness();
    try {
      const stage = new PostGuardrailStage(strategies({ model: await modelTraffic({ guardrails }), mcp: await mcpTraffic(harness.gateway, { guardrails }) }));
      const ctx = chatContext('hi');
      ctx.model!.result = { status: 200, headers: {}, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'call 555-867-5309 or jane@example.com' }, finish_reason: 'stop' }] } };
      await stage.run(ctx);
      expect((ctx.model!.result!.body as any).choices[0].message.content).to.equal('call [PHONE] or [EMAIL]');

      const mcp = signedIn(new GatewayContext('mcp', 'mcp', Date.now(), { headers: {} }, new AbortController().signal), principal());
      mcp.mcp = { method: 'tools/call', toolName: 'crm-lookup', mcpHeaders: {}, result: { content: [{ type: 'text', text: 'owner: jane@example.com' }] } };
      await stage.run(mcp);
      expect(mcp.mcp.result).to.deep.equal({ content: [{ type: 'text', text: 'owner: [EMAIL]' }] });
    } finally {
      await harness.gateway.stop();
    }
  });
});
