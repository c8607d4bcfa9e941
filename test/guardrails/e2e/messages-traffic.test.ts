import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { FakeAnthropicUpstream, textEvents } from '../../providers/anthropic/fake-anthropic-upstream';
import { FakeOpenAI, chatChunks } from '../../support/fake-openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const EMAIL = 'jane.roe@example.org';
const IBAN = 'DE89 3704 0044 0532 0130 00';
const MODEL = 'claude-sonnet-4-5-20250929';

describe('guardrails on the Messages API (Anthropic SDK; Anthropic and OpenAI upstreams)', () => {
  let anthropic: FakeAnthropicUpstream;
  let openai: FakeOpenAI;
  let gw: TestGateway;
  let client: Anthropic;

  before(async () => {
    anthropic = new FakeAnthropicUpstream('sk-ant-provider');
    await anthropic.start();
    openai = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey('sk-client-1', { id: 'agent' })
      .withKey('sk-client-2', { id: 'strict', guardrails: ['no-iban'] })
      .withKey('sk-client-3', { id: 'payments', guardrails: ['mask-cards'] })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: anthropic.url, apiKey: 'sk-ant-provider' })
      .withOpenAI('oai', openai, 'sk-oai')
      .withModel('claude-test', { provider: 'claude', model: MODEL })
      .withModel('gpt-test', { model: 'upstream-model' })
      .with({
        routing: { retries: 0 },
        guardrails: [
          { id: 'mask-pii', engine: 'pii-mask', default: true, options: { entities: ['EMAIL'] } },
          { id: 'no-iban', engine: 'pii-mask', phase: 'post', options: { entities: ['IBAN'], actions: { IBAN: 'block' } } },
          { id: 'mask-cards', engine: 'pii-mask', phase: 'post', options: { entities: ['CREDIT_CARD'] } },
        ],
      })
      .start();
    client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-client-1', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await anthropic.close();
    await openai.stop();
  });

  it('masks the system prompt and message blocks before a native Anthropic upstream sees them', async () => {
    anthropic.reply({ json: { id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: `Mail ${EMAIL}` }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } } });
    const message = await client.messages.create({
      model: 'claude-test',
      max_tokens: 50,
      system: `Escalations go to ${EMAIL}.`,
      messages: [{ role: 'user', content: [{ type: 'text', text: `I am ${EMAIL}` }] }],
    });
    expect(anthropic.last.body.system).to.equal('Escalations go to [EMAIL].');
    expect(anthropic.last.body.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'I am [EMAIL]' }] }]);
    expect(message.content).to.deep.equal([{ type: 'text', text: 'Mail [EMAIL]' }]);
  });

  it('leaves signed thinking as Claude wrote it, both ways, and masks the text beside it (reasoning is not checked: see the README)', async () => {
    const thinking = { type: 'thinking', thinking: `The user is ${EMAIL}.`, signature: 'sig-opaque-1' };
    anthropic.reply({ json: { id: 'msg_t', type: 'message', role: 'assistant', model: MODEL, content: [thinking, { type: 'text', text: `Hello ${EMAIL}` }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } } });
    const message = await client.messages.create({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).to.deep.equal([thinking, { type: 'text', text: 'Hello [EMAIL]' }]);
    anthropic.reply({ json: { id: 'msg_u', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
    await client.messages.create({
      model: 'claude-test',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: message.content as any },
        { role: 'user', content: 'and?' },
      ],
    });
    // a thinking block whose text was changed fails Anthropic's signature check and the turn with it
    expect(anthropic.last.body.messages[1].content[0]).to.deep.equal(thinking);
  });

  it('masks the text of plain-text documents and search results, as it does a text block', async () => {
    anthropic.reply({ json: { id: 'msg_2', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
    await client.messages.create({
      model: 'claude-test',
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: `Contact: ${EMAIL}` }, title: 'Staff list' },
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: `Owner ${EMAIL}` }] } },
            { type: 'search_result', source: 'https://intranet.example/staff', title: 'Staff', content: [{ type: 'text', text: `Ask ${EMAIL}` }] },
            { type: 'text', text: 'Who should I write to?' },
          ],
        },
      ] as any,
    });
    const sent = JSON.stringify(anthropic.last.body.messages);
    expect(sent).to.not.include(EMAIL);
    expect(anthropic.last.body.messages[0].content[0].source.data).to.equal('Contact: [EMAIL]');
    expect(anthropic.last.body.messages[0].content[1].source.content[0].text).to.equal('Owner [EMAIL]');
    expect(anthropic.last.body.messages[0].content[2].content[0].text).to.equal('Ask [EMAIL]');
  });

  it('masks the server and MCP connector tools\' blocks a turn sends back: their input, their results and a fetched page', async () => {
    anthropic.reply({ json: { id: 'msg_m', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'mcp_tool_use', id: 'mcptoolu_2', name: 'lookup', server_name: 'crm', input: { q: EMAIL } }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
    const res = await fetch(`${gw.url}/native/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-client-1', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 50,
        messages: [
          { role: 'user', content: 'look it up' },
          {
            role: 'assistant',
            content: [
              { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'crm', input: { q: EMAIL } },
              { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: `found ${EMAIL}` }] },
              { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: `https://crm.example/?u=${EMAIL}` } },
              { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_fetch_result', url: 'https://crm.example/', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: `profile of ${EMAIL}` } } } },
            ],
          },
          { role: 'user', content: 'and again' },
        ],
      }),
    });
    expect(res.status).to.equal(200);
    expect(anthropic.last.body.messages[1].content).to.deep.equal([
      { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'crm', input: { q: '[EMAIL]' } },
      { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'found [EMAIL]' }] },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://crm.example/?u=[EMAIL]' } },
      { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_fetch_result', url: 'https://crm.example/', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'profile of [EMAIL]' } } } },
    ]);
    expect(((await res.json()) as any).content).to.deep.equal([{ type: 'mcp_tool_use', id: 'mcptoolu_2', name: 'lookup', server_name: 'crm', input: { q: '[EMAIL]' } }]);
  });

  it("masks the text a citation quotes from a document, in a JSON answer and a stream, as it masks the answer's text", async () => {
    const CARD = '4111 1111 1111 1111';
    const payments = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-client-3', maxRetries: 0 });
    const citation = { type: 'char_location', cited_text: `Card on file: ${CARD}.`, document_index: 0, document_title: 'Account', start_char_index: 0, end_char_index: 33 };
    const request = {
      model: 'claude-test',
      max_tokens: 50,
      messages: [
        {
          role: 'user' as const,
          content: [
            { type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: `Card on file: ${CARD}.` }, title: 'Account', citations: { enabled: true } },
            { type: 'text' as const, text: 'Which card is on file?' },
          ],
        },
      ],
    };
    anthropic.reply({
      json: { id: 'msg_c', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: `The card ${CARD}`, citations: [citation] }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } },
    });
    const message = await payments.messages.create(request);
    expect(JSON.stringify(message)).to.not.include(CARD);
    expect(message.content[0]).to.deep.include({ text: 'The card [CREDIT_CARD]', citations: [{ ...citation, cited_text: 'Card on file: [CREDIT_CARD].' }] });

    const events = textEvents('msg_cs', MODEL, [`The card ${CARD}`]);
    events.splice(events.findIndex((e) => e.event === 'content_block_stop'), 0, { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation } } } as any);
    anthropic.reply({ events });
    const final = await payments.messages.stream(request).finalMessage();
    expect(JSON.stringify(final)).to.not.include(CARD);
    expect(final.content[0]).to.deep.include({ text: 'The card [CREDIT_CARD]', citations: [{ ...citation, cited_text: 'Card on file: [CREDIT_CARD].' }] });
  });

  it('masks a value split across native Messages stream events at every position', async () => {
    const answer = `Write to ${EMAIL} today.`;
    const start = answer.indexOf(EMAIL);
    for (let cut = start + 1; cut < start + EMAIL.length; cut += 2) {
      anthropic.reply({ events: textEvents('msg_s', MODEL, [answer.slice(0, cut), answer.slice(cut)]) });
      const stream = client.messages.stream({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
      const final = await stream.finalMessage();
      expect(final.content.map((b) => b.type), `cut at ${cut - start}`).to.deep.equal(['text']);
      expect(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), `cut at ${cut - start}`).to.equal('Write to [EMAIL] today.');
      expect(final.usage.output_tokens).to.equal(5);
    }
  });

  it('masks text a native stream sends in a content_block_start, as it masks text deltas', async () => {
    const events = textEvents('msg_o', MODEL, [' or call later.']);
    const opening = events.find((e) => e.event === 'content_block_start')!;
    opening.data = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: `Write to ${EMAIL}` } };
    anthropic.reply({ events });
    const stream = client.messages.stream({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).to.deep.equal([{ type: 'text', text: 'Write to [EMAIL] or call later.' }]);
  });

  it('keeps a streamed tool_use input JSON the SDK can read: its strings masked as a JSON answer\'s, a card sent as a number left alone', async () => {
    // long enough that the window releases it in parts, with cuts inside strings and numbers
    const payments = Array.from({ length: 12 }, (_, i) => `{"memo": "invoice ${i}, \\"paid\\" by ${EMAIL} with 4111 1111 1111 1111", "card": 4111111111111111, "cents": ${1000 + i}}`);
    const input = `{"to": "${EMAIL}", "payments": [${payments.join(', ')}]}`;
    const deltas = input.match(/[\s\S]{1,7}/g)!;
    const [start, ...end] = textEvents('msg_t', MODEL, []).filter((e) => !e.event.startsWith('content_block'));
    anthropic.reply({
      events: [
        start,
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'pay', input: {} } } },
        ...deltas.map((partial_json) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } } })),
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ...end,
      ],
    });
    const cards = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-client-3', maxRetries: 0 });
    const final = await cards.messages.stream({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'pay' }] }).finalMessage();
    const masked = { to: '[EMAIL]', payments: Array.from({ length: 12 }, (_, i) => ({ memo: `invoice ${i}, "paid" by [EMAIL] with [CREDIT_CARD]`, card: 4111111111111111, cents: 1000 + i })) };
    expect(final.content).to.deep.equal([{ type: 'tool_use', id: 'toolu_1', name: 'pay', input: masked }]);
    anthropic.reply({ json: { id: 'msg_j', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'tool_use', id: 'toolu_1', name: 'pay', input: JSON.parse(input) }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 5 } } });
    const answer = await cards.messages.create({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'pay' }] });
    expect(answer.content).to.deep.equal(final.content);
  });

  it('masks the blocks a native stream sends whole, as an MCP connector\'s tool call and result, as it masks them in a JSON answer', async () => {
    const [start, ...end] = textEvents('msg_w', MODEL, [' done']);
    const whole = (index: number, block: unknown) => [
      { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: block } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
    ];
    anthropic.reply({
      events: [
        start,
        ...whole(0, { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'crm', input: { q: EMAIL } }),
        ...whole(1, { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: `found ${EMAIL}` }] }),
        ...end.map((e) => (typeof (e.data as any).index === 'number' ? { ...e, data: { ...(e.data as any), index: 2 } } : e)),
      ],
    });
    const final = await client.messages.stream({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'look it up' }] }).finalMessage();
    expect(final.content).to.deep.equal([
      { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'crm', input: { q: '[EMAIL]' } },
      { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: 'found [EMAIL]' }] },
      { type: 'text', text: ' done' },
    ]);
  });

  it('masks a translated stream (Messages client, OpenAI upstream)', async () => {
    openai.script = { kind: 'sse', events: chatChunks(['Reach jane.roe@exa', 'mple.org now'], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }) };
    const stream = client.messages.stream({ model: 'gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).to.equal('Reach [EMAIL] now');
  });

  it('ends a Messages stream with an error event when a blocking entity appears', async () => {
    anthropic.reply({ events: textEvents('msg_b', MODEL, ['Pay to ', IBAN.slice(0, 9), IBAN.slice(9), ' please.']) });
    const strict = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'sk-client-2', maxRetries: 0 });
    const stream = strict.messages.stream({ model: 'claude-test', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    let error: unknown;
    try {
      await stream.finalMessage();
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).to.include('IBAN');
    expect(text).to.not.include('3704');
  });
});
