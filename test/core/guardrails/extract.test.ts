import { expect } from 'chai';
import { mcpRequestSlots, mcpResponseSlots, modelRequestSlots, modelResponseSlots } from '../../../core/guardrails/extract';
import { putBack, toSegments, type TextSlot } from '../../../core/guardrails/text-slots';
import piiMask from '../../../guardrails/pii-mask';
import type { GuardrailEngine } from '../../../core/plugins/contracts';
import { createEngine, never } from '../../guardrails/harness';

const EMAIL = 'jane.roe@example.org';

describe('guardrail segment extraction and put-back', () => {
  let engine: GuardrailEngine;
  before(async () => {
    engine = await createEngine(piiMask, {});
  });

  /** What the stage does: segments to the engine, masked text back into the body. */
  async function mask(slots: TextSlot[]): Promise<string[]> {
    const verdict = await engine.check({ phase: 'pre', traffic: 'chat', target: 'm', segments: toSegments(slots) }, never);
    if (verdict.action === 'mask') putBack(slots, verdict.segments);
    return slots.map((s) => s.path);
  }

  it('masks chat request messages: string content, text parts, tool-call arguments and tool results', async () => {
    const body = {
      model: 'gpt-4o-mini',
      temperature: 0.2,
      messages: [
        { role: 'system', content: `Escalate to ${EMAIL}.` },
        { role: 'user', content: [{ type: 'text', text: `call +44 20 7946 0958` }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: `{"email":"${EMAIL}","n":3}` } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ip 10.0.0.7' },
      ],
      unknown_param: { keep: `${EMAIL}` },
    };
    const paths = await mask(modelRequestSlots('chat', body));
    expect(paths).to.deep.equal(['messages[0].content', 'messages[1].content[0].text', 'messages[2].tool_calls[0].function.arguments.email', 'messages[3].content']);
    expect(body).to.deep.equal({
      model: 'gpt-4o-mini',
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Escalate to [EMAIL].' },
        { role: 'user', content: [{ type: 'text', text: 'call [PHONE]' }, { type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"email":"[EMAIL]","n":3}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ip [IP_ADDRESS]' },
      ],
      // parameters the gateway does not know are not message text
      unknown_param: { keep: EMAIL },
    });
  });

  it('masks a chat completion response', async () => {
    const body = {
      id: 'x',
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: `Her card is 4111 1111 1111 1111.` }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: 'not json 536-22-1234' } }] }, finish_reason: 'tool_calls' },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    };
    await mask(modelResponseSlots('chat', body));
    expect(body.choices[0].message.content).to.equal('Her card is [CREDIT_CARD].');
    expect(body.choices[1].message.tool_calls?.[0].function.arguments).to.equal('not json [US_SSN]');
    expect(body.usage).to.deep.equal({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('masks a Messages request: system blocks, text, tool_use input and nested tool_result content', async () => {
    const body = {
      model: 'claude',
      max_tokens: 10,
      system: [{ type: 'text', text: `ops: ${EMAIL}`, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: `my ip 192.168.1.20` },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'u', name: 'crm', input: { who: { email: EMAIL }, tags: ['a', EMAIL] } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u', content: [{ type: 'text', text: `IBAN DE89 3704 0044 0532 0130 00` }] }] },
      ],
    };
    const paths = await mask(modelRequestSlots('messages', body));
    expect(paths).to.deep.equal([
      'system[0].text',
      'messages[0].content',
      'messages[1].content[0].input.who.email',
      'messages[1].content[0].input.tags[0]',
      'messages[1].content[0].input.tags[1]',
      'messages[2].content[0].content[0].text',
    ]);
    expect(body).to.deep.equal({
      model: 'claude',
      max_tokens: 10,
      system: [{ type: 'text', text: 'ops: [EMAIL]', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'my ip [IP_ADDRESS]' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'u', name: 'crm', input: { who: { email: '[EMAIL]' }, tags: ['a', '[EMAIL]'] } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u', content: [{ type: 'text', text: 'IBAN [IBAN]' }] }] },
      ],
    });
  });

  it('masks a Messages response', async () => {
    const body = { type: 'message', content: [{ type: 'text', text: `mail ${EMAIL}` }, { type: 'tool_use', id: 'u', name: 'f', input: { q: EMAIL } }] };
    await mask(modelResponseSlots('messages', body));
    expect(body.content).to.deep.equal([{ type: 'text', text: 'mail [EMAIL]' }, { type: 'tool_use', id: 'u', name: 'f', input: { q: '[EMAIL]' } }]);
  });

  it('masks embeddings input, as a string or a list, and skips token arrays', async () => {
    const one = { model: 'e', input: `embed ${EMAIL}` };
    await mask(modelRequestSlots('embeddings', one));
    expect(one.input).to.equal('embed [EMAIL]');
    const many = { model: 'e', input: ['plain', `and ${EMAIL}`] };
    await mask(modelRequestSlots('embeddings', many));
    expect(many.input).to.deep.equal(['plain', 'and [EMAIL]']);
    expect(modelRequestSlots('embeddings', { model: 'e', input: [1, 2, 3] })).to.deep.equal([]);
  });

  it('masks MCP tool arguments at any depth, leaving keys and non-strings alone', async () => {
    const args = { query: `find ${EMAIL}`, limit: 5, filter: { owners: [EMAIL, 'bob'], [EMAIL]: true } };
    await mask(mcpRequestSlots(args));
    expect(args).to.deep.equal({ query: 'find [EMAIL]', limit: 5, filter: { owners: ['[EMAIL]', 'bob'], [EMAIL]: true } });
  });

  it('masks MCP tool results: text content, text resources and structuredContent', async () => {
    const result = {
      content: [
        { type: 'text', text: `{"email":"${EMAIL}"}` },
        { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: `ssn 536-22-1234` } },
      ],
      structuredContent: { email: EMAIL, rows: [{ phone: '+1 415 555 2671', n: 1 }] },
      isError: false,
    };
    const paths = await mask(mcpResponseSlots(result));
    expect(paths).to.deep.equal(['content[0].text.email', 'content[2].resource.text', 'structuredContent.email', 'structuredContent.rows[0].phone']);
    expect(result).to.deep.equal({
      content: [
        { type: 'text', text: '{"email":"[EMAIL]"}' },
        { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'ssn [US_SSN]' } },
      ],
      structuredContent: { email: '[EMAIL]', rows: [{ phone: '[PHONE]', n: 1 }] },
      isError: false,
    });
  });

  it('finds nothing in shapes without text', () => {
    expect(modelRequestSlots('chat', {})).to.deep.equal([]);
    expect(modelResponseSlots('embeddings', { data: [] })).to.deep.equal([]);
    expect(mcpResponseSlots(undefined)).to.deep.equal([]);
  });
});
