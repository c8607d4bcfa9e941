import { expect } from 'chai';
import { GuardrailSet } from '../../../core/guardrails/guardrail-set';
import type { GuardrailConfig } from '../../../core/config/types';
import type { Principal } from '../../../core/auth/principal';

const engine = { check: () => ({ action: 'allow' as const }) };
const set = GuardrailSet.of(
  ([
    { id: 'everyone', engine: 'x', default: true },
    { id: 'listed-chat-pre', engine: 'x', on: ['chat'], phase: 'pre' },
    { id: 'listed-mcp-post', engine: 'x', on: ['mcp'], phase: 'post' },
    { id: 'default-mcp', engine: 'x', default: true, on: ['mcp'] },
  ] as GuardrailConfig[]).map((config) => ({ config, engine })),
);
const principal = (guardrails: string[]) => ({ keyId: 'k', org: 'o', role: 'member', allowsModel: () => true, guardrails }) as Principal;
const ids = (p: Principal, traffic: 'chat' | 'mcp', phase: 'pre' | 'post') => set.select(p, traffic, phase).map((g) => g.id);

describe('guardrail attachment', () => {
  it('applies default guardrails to every key, in both phases unless one is set', () => {
    expect(ids(principal([]), 'chat', 'pre')).to.deep.equal(['everyone']);
    expect(ids(principal([]), 'chat', 'post')).to.deep.equal(['everyone']);
    expect(ids(principal([]), 'mcp', 'post')).to.deep.equal(['everyone', 'default-mcp']);
  });

  it('applies a non-default guardrail only to keys that list it, on its traffic and phase', () => {
    const p = principal(['listed-chat-pre', 'listed-mcp-post']);
    expect(ids(p, 'chat', 'pre')).to.deep.equal(['everyone', 'listed-chat-pre']);
    expect(ids(p, 'chat', 'post')).to.deep.equal(['everyone']);
    expect(ids(p, 'mcp', 'pre')).to.deep.equal(['everyone', 'default-mcp']);
    expect(ids(p, 'mcp', 'post')).to.deep.equal(['everyone', 'listed-mcp-post', 'default-mcp']);
  });

  it('defaults onError to block and mode to enforce', () => {
    const [g] = set.select(principal([]), 'chat', 'pre');
    expect({ onError: g.onError, audit: g.audit }).to.deep.equal({ onError: 'block', audit: false });
  });
});
