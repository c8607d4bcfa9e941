import { expect } from 'chai';
import { EventStreamDecoder } from '../../../providers/bedrock/event-stream';
import { GatewayError } from '../../../core/errors/gateway-error';
import { testConfig } from '../../support/test-config';
import { eventMessage, exceptionMessage } from './fake-bedrock-upstream';

function failure(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('bedrock provider: event-stream decoding', () => {
  it('names each message by its event or exception type, whatever the chunking', () => {
    const bytes = Buffer.concat([eventMessage('messageStart', { role: 'assistant' }), eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi' } }), exceptionMessage('throttlingException', 'slow down')]);
    for (const size of [1, 5, 64, bytes.length]) {
      const decoder = new EventStreamDecoder();
      const frames = [];
      for (let at = 0; at < bytes.length; at += size) frames.push(...decoder.push(bytes.subarray(at, at + size)));
      frames.push(...decoder.end());
      expect(frames.map((f) => [f.event, f.json])).to.deep.equal([
        ['messageStart', { role: 'assistant' }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi' } }],
        ['throttlingException', { message: 'slow down' }],
      ]);
    }
  });

  it('a body that ends inside a message is a cut stream', () => {
    const message = eventMessage('messageStop', { stopReason: 'end_turn' });
    const decoder = new EventStreamDecoder();
    expect(decoder.push(message.subarray(0, message.length - 3))).to.deep.equal([]);
    expect(failure(() => decoder.end()).code).to.equal('upstream_stream_cut');
  });

  it('refuses at once a message longer than the format allows, rather than waiting for its bytes', () => {
    // "HTTP" read as a length: 1.2 GB; the decoder waited for all of it before, until the body ended
    const decoder = new EventStreamDecoder();
    const err = failure(() => decoder.push(Buffer.from('HTTP/1.1 502 Bad Gateway\r\n\r\n<html>')));
    expect({ code: err.code, status: err.status }).to.deep.equal({ code: 'upstream_bad_response', status: 502 });
    const atLimit = Buffer.alloc(8);
    atLimit.writeUInt32BE(16 * 1024 * 1024, 0);
    expect(new EventStreamDecoder().push(atLimit), 'a message of the largest length waits for its bytes').to.deep.equal([]);
  });

  it('decodes a long message that arrives in many small chunks, and one that ends with the next one in the same chunk', () => {
    const long = eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x'.repeat(100_000) } });
    const next = eventMessage('messageStop', { stopReason: 'end_turn' });
    const bytes = Buffer.concat([long, next]);
    const decoder = new EventStreamDecoder();
    const frames = [];
    // 100-byte chunks until just past the long message's end, then the rest at once
    let at = 0;
    for (; at < long.length + 10; at += 100) frames.push(...decoder.push(bytes.subarray(at, Math.min(at + 100, long.length + 10))));
    frames.push(...decoder.push(bytes.subarray(long.length + 10)));
    frames.push(...decoder.end());
    expect(frames.map((f) => [f.event, f.event === 'contentBlockDelta' ? f.json.delta.text.length : f.json])).to.deep.equal([
      ['contentBlockDelta', 100_000],
      ['messageStop', { stopReason: 'end_turn' }],
    ]);
  });

  it('a message whose checksum does not match is refused', () => {
    const message = Buffer.from(eventMessage('messageStop', { stopReason: 'end_turn' }));
    message[message.length - 6] ^= 0xff; // a payload byte: the message CRC no longer matches
    expect(failure(() => new EventStreamDecoder().push(message)).code).to.equal('upstream_bad_response');
  });
});

describe('bedrock provider: boot', () => {
  it('stops the boot when only one of accessKeyId and secretAccessKey is set, naming the entry', async () => {
    let message = '';
    try {
      const gw = await testConfig().withKey('sk-boot-test-key').withProvider({ id: 'aws-half', type: 'bedrock', region: 'us-east-1', accessKeyId: 'AKIAHALFONLY00000000' }).withModel('m', { model: 'anthropic.claude-3-haiku-20240307-v1:0' }).start();
      await gw.close();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.include('providers[0].options');
    expect(message).to.include('"aws-half" has only one of accessKeyId and secretAccessKey');
  });
});
