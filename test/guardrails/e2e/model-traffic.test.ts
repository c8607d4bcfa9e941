import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatChunks, chatCompletion } from '../../support/fake-openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const EMAIL = 'jane.roe@example.org';
const CARD = '4111 1111 1111 1111';
const PHONE = '+44 20 7946 0958';
const KEYS = { plain: 'sk-gw-plain-0001', strict: 'sk-gw-strict-0002', fragile: 'sk-gw-fragile-0003', lenient: 'sk-gw-lenient-0004', auditor: 'sk-gw-audit-0005' };

describe('guardrails on model traffic (openai SDK, fake OpenAI upstream)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  const client = (key: keyof typeof KEYS) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEYS[key], maxRetries: 0 });

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEYS.plain, { id: 'plain' })
      .withKey(KEYS.strict, { id: 'strict', guardrails: ['no-falcon', 'no-internal'] })
      .withKey(KEYS.fragile, { id: 'fragile', guardrails: ['broken-closed'] })
      .withKey(KEYS.lenient, { id: 'lenient', guardrails: ['broken-open'] })
      .withKey(KEYS.auditor, { id: 'auditor', guardrails: ['audit-words'] })
      .withOpenAI('oai', upstream, 'sk-provider-x')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .withModel('embed-test', { model: 'upstream-embed', kind: 'embedding' })
      .with({
        plugins: [path.join(__dirname, '..', 'fixtures', 'failing-guardrail.js')],
        guardrails: [
          { id: 'mask-pii', engine: 'pii-mask', default: true, on: ['chat'] },
          { id: 'no-falcon', engine: 'block', phase: 'pre', options: { words: ['project falcon', 'café noir'] } },
          { id: 'no-internal', engine: 'block', phase: 'post', options: { patterns: ['internal\\s+use\\s+only'], words: ['falcon'] } },
          { id: 'broken-closed', engine: 'always-fails', onError: 'block' },
          { id: 'broken-open', engine: 'always-fails', onError: 'allow' },
          { id: 'audit-words', engine: 'block', mode: 'audit', options: { words: ['falcon'] } },
        ],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script = { kind: 'json', body: chatCompletion('Hello from upstream') };
  });

  /** The log entry is written when the request settles, which may be just after the client has its answer. */
  let seenLogId: string | undefined;
  beforeEach(async () => {
    seenLogId = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0]?.id;
  });
  const lastLog = async () => {
    for (;;) {
      const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
      if (entry && entry.id !== seenLogId) return entry;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('masks personal data in the request before the upstream sees it, and logs the verdict without the value', async () => {
    const { choices } = await client('plain').chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: `Write to ${EMAIL} about card ${CARD}.` }] },
      ],
    });
    expect(choices[0].message.content).to.equal('Hello from upstream');
    expect(upstream.last.body.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Write to [EMAIL] about card [CREDIT_CARD].' }] },
    ]);
    expect(upstream.last.rawBody).to.not.include(EMAIL);
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.equal([
      { id: 'mask-pii', phase: 'pre', verdict: 'mask', findings: ['CREDIT_CARD', 'EMAIL'] },
      { id: 'mask-pii', phase: 'post', verdict: 'allow' },
    ]);
    expect(JSON.stringify(entry)).to.not.include(EMAIL).and.to.not.include('4111');
  });

  it('masks personal data in a JSON answer', async () => {
    upstream.script = { kind: 'json', body: chatCompletion(`Call ${PHONE} or mail ${EMAIL}.`) };
    const { choices, usage } = await client('plain').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'contact?' }] });
    expect(choices[0].message.content).to.equal('Call [PHONE] or mail [EMAIL].');
    expect(usage).to.deep.equal({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });

  it("does not hand back a masked answer's text token by token in its logprobs", async () => {
    const tokens = ['Mail ', 'jane', '.roe', '@example', '.org', ' today.'];
    const logprobs = { content: tokens.map((token) => ({ token, logprob: -0.1, bytes: [...Buffer.from(token)], top_logprobs: [{ token, logprob: -0.1, bytes: [...Buffer.from(token)] }] })), refusal: null };
    upstream.script = { kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: tokens.join(''), refusal: null }, logprobs, finish_reason: 'stop' }] } };
    const masked = await client('plain').chat.completions.create({ model: 'gpt-test', logprobs: true, top_logprobs: 1, messages: [{ role: 'user', content: 'contact?' }] });
    expect(masked.choices[0].message.content).to.equal('Mail [EMAIL] today.');
    expect(JSON.stringify(masked)).to.not.include('example');
    expect(masked.choices[0].logprobs).to.equal(null);
    // an answer the guardrails leave alone keeps its logprobs
    const plain = { content: [{ token: 'Hi.', logprob: -0.1, bytes: [72, 105, 46], top_logprobs: [] }], refusal: null };
    upstream.script = { kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: 'Hi.', refusal: null }, logprobs: plain, finish_reason: 'stop' }] } };
    const kept = await client('plain').chat.completions.create({ model: 'gpt-test', logprobs: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(kept.choices[0].logprobs).to.deep.equal(plain);
  });

  it("does not stream a masked answer's text token by token in its logprobs, and keeps the logprobs of text it lets through", async () => {
    const lp = (token: string) => ({ token, logprob: -0.1, bytes: [...Buffer.from(token)], top_logprobs: [] });
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const script = (tokens: string[]) => ({
      kind: 'sse' as const,
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] },
        ...tokens.map((t) => ({ ...base, choices: [{ index: 0, delta: { content: t }, logprobs: { content: [lp(t)], refusal: null }, finish_reason: null }] })),
        { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
      ],
    });
    const read = async () => {
      const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, logprobs: true, messages: [{ role: 'user', content: 'contact?' }] });
      let text = '';
      const tokens: string[] = [];
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        for (const t of chunk.choices[0]?.logprobs?.content ?? []) tokens.push(t.token);
      }
      return { text, tokens };
    };
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    upstream.script = script([...words, 'Mail ', 'jane', '.roe', '@example', '.org', ' today.']);
    const masked = await read();
    expect(masked.text).to.equal(`${words.join('')}Mail [EMAIL] today.`);
    expect(masked.tokens.join('')).to.not.include('example');
    expect(words.join('').startsWith(masked.tokens.join(''))).to.equal(true);
    upstream.script = script([...words, 'Bye.']);
    const kept = await read();
    expect(kept.tokens).to.deep.equal([...words, 'Bye.']);
  });

  it('keeps a structured answer (response_format json_schema) JSON when it masks a value after an escape, JSON and stream', async () => {
    const doc = JSON.stringify({ note: `Hi,\n${EMAIL}`, card: 4111111111111111 });
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'note', schema: { type: 'object' } } };
    upstream.script = { kind: 'json', body: chatCompletion(doc) };
    const { choices } = await client('plain').chat.completions.create({ model: 'gpt-test', response_format, messages: [{ role: 'user', content: 'note?' }] });
    expect(JSON.parse(choices[0].message.content!)).to.deep.equal({ note: 'Hi,\n[EMAIL]', card: 4111111111111111 });
    upstream.script = { kind: 'sse', events: chatChunks([doc.slice(0, 12), doc.slice(12, 30), doc.slice(30)]) };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, response_format, messages: [{ role: 'user', content: 'note?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(JSON.parse(text)).to.deep.equal({ note: 'Hi,\n[EMAIL]', card: 4111111111111111 });
  });

  it('masks a JSON answer whose content is a list of parts, as some OpenAI-compatible servers send it', async () => {
    upstream.script = { kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'text', text: `Mail ${EMAIL}.` }, { type: 'text', text: `Or call ${PHONE}.` }] }, finish_reason: 'stop' }] } };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.plain}` },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'contact?' }] }),
    });
    const body = (await res.json()) as any;
    expect(body.choices[0].message.content).to.deep.equal([{ type: 'text', text: 'Mail [EMAIL].' }, { type: 'text', text: 'Or call [PHONE].' }]);
  });

  it('masks values split across stream chunks at every position', async () => {
    const answer = `Sure. You can reach Jane at ${EMAIL} or on ${PHONE}; her card is ${CARD}. Anything else?`;
    for (const value of [EMAIL, PHONE, CARD]) {
      const start = answer.indexOf(value);
      for (let cut = start + 1; cut < start + value.length; cut += 3) {
        upstream.script = { kind: 'sse', events: chatChunks([answer.slice(0, cut), answer.slice(cut, cut + 2), answer.slice(cut + 2)], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }) };
        const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'contact?' }] });
        let text = '';
        let finish: string | null = null;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        expect(text, `${value} cut at ${cut - start}`).to.equal('Sure. You can reach Jane at [EMAIL] or on [PHONE]; her card is [CREDIT_CARD]. Anything else?');
        expect(finish).to.equal('stop');
      }
    }
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'mask-pii', phase: 'post', verdict: 'mask', findings: ['CREDIT_CARD', 'EMAIL', 'PHONE'] });
    expect(entry.completionTokens).to.equal(4);
  });

  it('masks all of a streamed private key longer than the hold limit, as the JSON answer reads', async () => {
    const line = (i: number) => `MII${String(i).padStart(4, '0')}${'Qk'.repeat(28)}AB`.slice(0, 64);
    const key = ['-----BEGIN RSA PRIVATE KEY-----', ...Array.from({ length: 120 }, (_, i) => line(i)), '-----END RSA PRIVATE KEY-----'].join('\n');
    const answer = `Here it is:\n${key}\nDone.`;
    const pieces: string[] = [];
    for (let i = 0; i < answer.length; i += 100) pieces.push(answer.slice(i, i + 100));
    upstream.script = { kind: 'sse', events: chatChunks(pieces) };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'key?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).to.equal('Here it is:\n[SECRET]\nDone.');
  });

  it('keeps the text in order when the last chunk carries more text than the window together with its finish_reason', async () => {
    // some OpenAI-compatible servers stream a whole answer as one chunk that also finishes the choice
    const answer = Array.from({ length: 40 }, (_, i) => `Sentence ${i} ends here.`).join(' ') + ` Mail ${EMAIL}.`;
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: answer }, finish_reason: 'stop' }] },
      ],
    };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'talk' }] });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(finish, 'text after the finish_reason').to.equal(null);
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).to.equal(answer.replace(EMAIL, '[EMAIL]'));
    expect(finish).to.equal('stop');
  });

  it('masks a streamed refusal as it masks the refusal of a JSON answer', async () => {
    const refusal = `I cannot share what I know about ${EMAIL}.`;
    upstream.script = { kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, logprobs: null, finish_reason: 'stop' }] } };
    const json = await client('plain').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'who?' }] });
    expect(json.choices[0].message.refusal).to.equal('I cannot share what I know about [EMAIL].');
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const cut = refusal.indexOf('@');
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { refusal: refusal.slice(0, cut) }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { refusal: refusal.slice(cut) }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      ],
    };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'who?' }] });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.refusal ?? '';
    expect(streamed).to.equal('I cannot share what I know about [EMAIL].');
  });

  it("masks an earlier assistant turn's refusal, as a refusal part or field, before the upstream sees it", async () => {
    await client('plain').chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'who is it?' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: `I will not say that it is ${EMAIL}.` }] },
        { role: 'user', content: 'and now?' },
        { role: 'assistant', content: null, refusal: `Still not telling you about ${PHONE}.` },
        { role: 'user', content: 'fine' },
      ],
    });
    expect(upstream.last.body.messages[1].content).to.deep.equal([{ type: 'refusal', refusal: 'I will not say that it is [EMAIL].' }]);
    expect(upstream.last.body.messages[3].refusal).to.equal('Still not telling you about [PHONE].');
    expect(upstream.last.rawBody).to.not.include(EMAIL).and.to.not.include(PHONE);
  });

  it('masks predicted output, as a string or as text parts, before the upstream sees it', async () => {
    await client('plain').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'fix the typo' }], prediction: { type: 'content', content: `Mail ${EMAIL} today.` } });
    expect(upstream.last.body.prediction).to.deep.equal({ type: 'content', content: 'Mail [EMAIL] today.' });
    await client('plain').chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'fix the typo' }],
      prediction: { type: 'content', content: [{ type: 'text', text: 'Dear all,' }, { type: 'text', text: `call ${PHONE}.` }] },
    });
    expect(upstream.last.body.prediction).to.deep.equal({ type: 'content', content: [{ type: 'text', text: 'Dear all,' }, { type: 'text', text: 'call [PHONE].' }] });
    expect(upstream.last.rawBody).to.not.include(PHONE);
  });

  it('masks tool-call arguments where they are written: big numbers keep their digits, and a key given twice is checked in both places', async () => {
    const args = [`{"order": 12345678901234567890, "to": "${EMAIL}"}`, `{"q": "mail ${EMAIL}", "q": "hi"}`];
    await client('plain').chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'send it' },
        { role: 'assistant', content: null, tool_calls: args.map((a, i) => ({ id: `call_${i}`, type: 'function' as const, function: { name: 'send', arguments: a } })) },
        { role: 'tool', tool_call_id: 'call_0', content: 'sent' },
        { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
      ],
    });
    expect(upstream.last.body.messages[1].tool_calls.map((t: any) => t.function.arguments)).to.deep.equal(['{"order": 12345678901234567890, "to": "[EMAIL]"}', '{"q": "mail [EMAIL]", "q": "hi"}']);
    expect(upstream.last.rawBody).to.not.include(EMAIL);
  });

  it('masks the arguments of a legacy function_call (the functions parameter) in the request, a JSON answer and a stream', async () => {
    const functions = [{ name: 'send', parameters: { type: 'object', properties: { to: { type: 'string' } } } }];
    const reply = { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, function_call: { name: 'send', arguments: `{"to": "${EMAIL}"}` } }, finish_reason: 'function_call' }] };
    upstream.script = { kind: 'json', body: reply };
    const { choices } = await client('plain').chat.completions.create({
      model: 'gpt-test',
      functions,
      messages: [
        { role: 'user', content: 'send it' },
        { role: 'assistant', content: null, function_call: { name: 'send', arguments: `{"to": "${EMAIL}", "n": 12345678901234567890}` } },
        { role: 'function', name: 'send', content: 'sent' },
      ],
    });
    expect(upstream.last.body.messages[1].function_call.arguments).to.equal('{"to": "[EMAIL]", "n": 12345678901234567890}');
    expect(upstream.last.rawBody).to.not.include(EMAIL);
    expect(choices[0].message.function_call).to.deep.equal({ name: 'send', arguments: '{"to": "[EMAIL]"}' });

    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const pieces = ['{"to": "jane.r', 'oe@example', '.org"}'];
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, function_call: { name: 'send', arguments: '' } }, finish_reason: null }] },
        ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { function_call: { arguments: p } }, finish_reason: null }] })),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'function_call' }] },
      ],
    };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, functions, messages: [{ role: 'user', content: 'send it' }] });
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      args += chunk.choices[0]?.delta?.function_call?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(args).to.equal('{"to": "[EMAIL]"}');
    expect(finish).to.equal('function_call');
  });

  it("masks a custom tool call's free-text input in the request and in a JSON answer, as it masks a function's arguments", async () => {
    const tools = [{ type: 'custom' as const, custom: { name: 'shell' } }];
    upstream.script = {
      kind: 'json',
      body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_9', type: 'custom', custom: { name: 'shell', input: `mail -s hi ${EMAIL}` } }] }, finish_reason: 'tool_calls' }] },
    };
    const { choices } = await client('plain').chat.completions.create({
      model: 'gpt-test',
      tools,
      messages: [
        { role: 'user', content: 'send it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'shell', input: `echo ${EMAIL}` } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'done' },
      ],
    });
    expect(upstream.last.body.messages[1].tool_calls[0].custom.input).to.equal('echo [EMAIL]');
    expect(upstream.last.rawBody).to.not.include(EMAIL);
    expect(choices[0].message.tool_calls).to.deep.equal([{ id: 'call_9', type: 'custom', custom: { name: 'shell', input: 'mail -s hi [EMAIL]' } }]);
  });

  it('masks streamed tool-call arguments whose strings hold escapes (a new line before a value) into JSON that still parses, as the JSON answer reads', async () => {
    const args = JSON.stringify({ body: `Hi,\n${EMAIL}\nthanks`, to: `\u00e9 ${EMAIL}` }).replace('\u00e9', '\\u00e9');
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const pieces = [args.slice(0, 9), args.slice(9, 20), args.slice(20)];
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'send', arguments: '' } }] }, finish_reason: null }] },
        ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: p } }] }, finish_reason: null }] })),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ],
    };
    const stream = await client('plain').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'send it' }] });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
    expect(JSON.parse(streamed)).to.deep.equal({ body: 'Hi,\n[EMAIL]\nthanks', to: '\u00e9 [EMAIL]' });

    upstream.script = { kind: 'json', body: { ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send', arguments: args } }] }, finish_reason: 'tool_calls' }] } };
    const { choices } = await client('plain').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'send it' }] });
    expect(JSON.parse((choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments)).to.deep.equal(JSON.parse(streamed));
    // a blocked word just after a new line is blocked in the stream as in the JSON answer
    const blocked = JSON.stringify({ note: 'Plans:\nFalcon ships in May' });
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'send', arguments: blocked } }] }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ],
    };
    const failing = await client('strict').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'send it' }] });
    let error: unknown;
    try {
      for await (const chunk of failing) void chunk;
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).to.match(/blocked word/);
  });

  it('masks tool-call arguments nested deeper than 64 levels before the upstream sees them', async () => {
    const nest = (depth: number, leaf: unknown) => Array.from({ length: depth }).reduce<unknown>((inner) => ({ next: inner }), leaf);
    await client('plain').chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'save it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'save', arguments: JSON.stringify(nest(100, `mail ${EMAIL}`)) } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'saved' },
      ],
    });
    expect(JSON.parse(upstream.last.body.messages[1].tool_calls[0].function.arguments)).to.deep.equal(nest(100, 'mail [EMAIL]'));
    expect(upstream.last.rawBody).to.not.include(EMAIL);
  });

  it('blocks a request before the call: 400 guardrail_blocked, the upstream never sees it, and it is logged', async () => {
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me about Project Falcon.' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error).to.be.instanceOf(OpenAI.BadRequestError);
    expect(error?.status).to.equal(400);
    expect(error?.code).to.equal('guardrail_blocked');
    expect(error?.type).to.equal('invalid_request_error');
    expect(error?.message.toLowerCase()).to.not.include('falcon');
    expect(upstream.requests).to.have.length(0);
    const entry = await lastLog();
    expect(entry).to.include({ keyId: 'strict', status: 400, errorCode: 'guardrail_blocked', cost: 0 });
    expect(entry.details!.guardrails).to.deep.equal([
      { id: 'mask-pii', phase: 'pre', verdict: 'allow' },
      { id: 'no-falcon', phase: 'pre', verdict: 'block' },
    ]);
  });

  it('blocks a JSON answer after the call and still charges it', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('This is for INTERNAL   use only.') };
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.status).to.equal(400);
    expect(error?.code).to.equal('guardrail_blocked');
    expect(upstream.requests).to.have.length(1);
    const entry = await lastLog();
    expect(entry).to.include({ status: 400, errorCode: 'guardrail_blocked', promptTokens: 10, completionTokens: 5 });
    expect(entry.cost).to.be.greaterThan(0);
  });

  it('charges a blocked JSON answer that reported no usage from an estimate, as an answer let through is', async () => {
    const { usage: _none, ...answer } = chatCompletion('This is for internal use only.');
    upstream.script = { kind: 'json', body: answer };
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.code).to.equal('guardrail_blocked');
    const entry = await lastLog();
    expect(entry).to.include({ status: 400, errorCode: 'guardrail_blocked' });
    expect(entry.promptTokens).to.be.greaterThan(0);
    expect(entry.completionTokens).to.be.greaterThan(0);
    expect(entry.cost).to.be.greaterThan(0);
    expect(entry.details!.usageEstimated).to.equal(true);
  });

  it('blocks a phrase and a \\s pattern whose words are separated by a no-break or ideographic space', async () => {
    const refusal = async (send: () => Promise<unknown>) => {
      try {
        await send();
      } catch (err) {
        return err as InstanceType<typeof OpenAI.APIError>;
      }
      return undefined;
    };
    const asked = await refusal(() => client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Tell me about Project\u00a0Falcon.' }] }));
    expect(asked?.status).to.equal(400);
    expect(asked?.code).to.equal('guardrail_blocked');
    expect(upstream.requests).to.have.length(0);
    upstream.script = { kind: 'json', body: chatCompletion('This is for internal\u3000use\u00a0only.') };
    const answered = await refusal(() => client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }));
    expect(answered?.status).to.equal(400);
    expect(answered?.code).to.equal('guardrail_blocked');
    expect(answered?.message).to.match(/matched pattern 1/);
  });

  it('blocks a word written with a combining accent, in fullwidth letters or with a zero-width character inside, and sends unmatched text on as written', async () => {
    for (const content of ['Tell me about Project \uff26\uff41\uff4c\uff43\uff4f\uff4e.', 'Tell me about Project Fal\u200bcon.', 'Tell me about Pro\u200dject Falcon.', 'One CAFE\u0301 NOIR, please.']) {
      let error: InstanceType<typeof OpenAI.APIError> | undefined;
      try {
        await client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content }] });
      } catch (err) {
        error = err as InstanceType<typeof OpenAI.APIError>;
      }
      expect(error?.code, JSON.stringify(content)).to.equal('guardrail_blocked');
    }
    expect(upstream.requests).to.have.length(0);
    const fine = 'A cafe\u0301 au lait for the \uff26\uff41\uff4c\uff43\uff4f\uff4e\u200b team.';
    await client('strict').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: fine }] });
    expect(upstream.last.body.messages[0].content).to.equal(fine);
  });

  it("checks an audio answer's transcript (modalities: audio), JSON and stream, as it checks a text answer", async () => {
    const audio = (transcript: string) => ({ ...chatCompletion(''), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, audio: { id: 'audio_1', data: 'UklGRg==', expires_at: 1700003600, transcript } }, finish_reason: 'stop' }] });
    const ask = { model: 'gpt-test', modalities: ['text', 'audio'] as ('text' | 'audio')[], audio: { voice: 'alloy' as const, format: 'wav' as const }, messages: [{ role: 'user' as const, content: 'plans?' }] };
    upstream.script = { kind: 'json', body: audio('Project Falcon ships on Monday.') };
    const err = await client('strict').chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('guardrail_blocked');
    upstream.script = { kind: 'json', body: audio(`Mail ${EMAIL} today.`) };
    const { choices } = await client('plain').chat.completions.create(ask);
    expect(choices[0].message.audio).to.deep.include({ id: 'audio_1', transcript: 'Mail [EMAIL] today.' });

    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
    const pieces = ['Mail jane.r', 'oe@example', '.org today.'];
    upstream.script = {
      kind: 'sse',
      events: [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] },
        ...pieces.map((transcript, n) => ({ ...base, choices: [{ index: 0, delta: { audio: { ...(n === 0 ? { id: 'audio_1' } : {}), data: 'UklGRg==', transcript } }, finish_reason: null }] })),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      ],
    };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.plain}` },
      body: JSON.stringify({ ...ask, stream: true }),
    });
    const chunks = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    const transcript = chunks.map((c) => c.choices?.[0]?.delta?.audio?.transcript ?? '').join('');
    expect(transcript).to.equal('Mail [EMAIL] today.');
  });

  it('ends a stream with an error event when a block engine matches mid-stream', async () => {
    const pieces = ['Here is the plan. ', 'x'.repeat(300), ' It is internal ', 'use only, sorry.', ' More text.'];
    upstream.script = { kind: 'sse', events: chatChunks(pieces) };
    const stream = await client('strict').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let error: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).to.match(/matched pattern 1/);
    // the text before the window was released; the blocked phrase never was
    expect(text.startsWith('Here is the plan.')).to.equal(true);
    expect(text).to.not.include('internal');
    const entry = await lastLog();
    expect(entry).to.include({ outcome: 'stream_error', errorCode: 'guardrail_blocked' });
    expect(entry.details!.guardrails).to.deep.include({ id: 'no-internal', phase: 'post', verdict: 'block' });
  });

  it('ends a stream whose blocked phrase has its words set far apart by a long run of whitespace', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['This is for internal', ' '.repeat(600), '\n'.repeat(400), 'use only.', ' More.']) };
    const stream = await client('strict').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let error: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).to.match(/matched pattern 1/);
    expect(text).to.not.include('internal');
  });

  it('ends a stream whose blocked phrase has its words set far apart by a long run of Unicode spaces', async () => {
    // the pattern's \s matches every JavaScript space, so the stream window must count a run of them as one
    upstream.script = { kind: 'sse', events: chatChunks(['This is for internal', '\u2003'.repeat(600), '\u3000\u2028'.repeat(200), 'use only.', ' More.']) };
    const stream = await client('strict').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let error: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).to.match(/matched pattern 1/);
    expect(text).to.not.include('internal');
  });

  it('ends a stream whose blocked word has a long run of zero-width characters inside it, as the JSON answer is blocked', async () => {
    const zw = '\u200b'.repeat(200);
    upstream.script = { kind: 'sse', events: chatChunks(['Tell me about Fal', zw, zw, zw, 'con. More.']) };
    const stream = await client('strict').chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let error: unknown;
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).to.match(/matched a blocked word/);
    expect(text).to.not.include('Fal');
    const entry = await lastLog();
    expect(entry).to.include({ outcome: 'stream_error', errorCode: 'guardrail_blocked' });
  });

  it('blocks when an engine fails and onError is "block", without leaking the engine error', async () => {
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client('fragile').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'secret plans' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.status).to.equal(400);
    expect(error?.code).to.equal('guardrail_blocked');
    expect(error?.message).to.equal('400 The guardrail "broken-closed" could not check the request, so it was blocked.');
    expect(upstream.requests).to.have.length(0);
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'broken-closed', phase: 'pre', verdict: 'error' });
    expect(gw.logLines.join('\n')).to.not.include('secret plans');
  });

  it('lets the call through when an engine fails and onError is "allow", recording the error', async () => {
    const { choices } = await client('lenient').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });
    expect(choices[0].message.content).to.equal('Hello from upstream');
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'broken-open', phase: 'pre', verdict: 'error' });
    expect(entry.details!.guardrails).to.deep.include({ id: 'broken-open', phase: 'post', verdict: 'error' });
  });

  it('records but does not act in audit mode', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('The falcon has landed.') };
    const { choices } = await client('auditor').chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Status of falcon?' }] });
    expect(choices[0].message.content).to.equal('The falcon has landed.');
    expect(upstream.last.body.messages[0].content).to.equal('Status of falcon?');
    const entry = await lastLog();
    expect(entry.details!.guardrails).to.deep.include({ id: 'audit-words', phase: 'pre', verdict: 'block', audited: true });
    expect(entry.details!.guardrails).to.deep.include({ id: 'audit-words', phase: 'post', verdict: 'block', audited: true });
  });

  it('masks embeddings input', async () => {
    upstream.script = { kind: 'json', body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1] }, { object: 'embedding', index: 1, embedding: [0.2] }], model: 'upstream-embed', usage: { prompt_tokens: 4, total_tokens: 4 } } };
    await client('plain').embeddings.create({ model: 'embed-test', input: ['plain text', `mail ${EMAIL}`] });
    expect(upstream.last.body.input).to.deep.equal(['plain text', 'mail [EMAIL]']);
  });
});
