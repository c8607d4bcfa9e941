import { expect } from 'chai';
import { AccessLines } from '../../../core/observability/access-lines';
import { createLogger } from '../../../core/observability/logger';
import type { Logger } from '../../../core/plugins/contracts';
import { eventually } from '../../support/eventually';
import { FakeOpenAI } from '../../support/fake-openai';
import { startGateway } from '../../support/start-gateway';

/** The JSON lines a real gateway logger wrote, parsed. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const written: string[] = [];
  return { logger: createLogger({ level: 'info', write: (line) => written.push(line) }), lines: () => written.map((l) => JSON.parse(l)) };
}

describe('core/observability/access-lines (a real logger)', () => {
  it('hands the lines of one moment to the logger together, in order, each with its fields', async () => {
    const { logger, lines } = capture();
    const access = new AccessLines(logger);
    access.add({ requestId: 'a', status: 200 });
    access.add({ requestId: 'b', status: 404 });
    // not one at a time as each request ends: together, a moment later
    expect(lines()).to.have.length(0);
    await eventually(() => lines().length === 2);
    expect(lines().map((l) => [l.msg, l.level, l.requestId, l.status])).to.deep.equal([
      ['request', 'info', 'a', 200],
      ['request', 'info', 'b', 404],
    ]);
    // a later request starts a new moment
    access.add({ requestId: 'c', status: 200 });
    await eventually(() => lines().length === 3);
    expect(lines()[2].requestId).to.equal('c');
  });

  it('writes what waits at once when asked (the gateway closing), and leaves nothing scheduled twice', async () => {
    const { logger, lines } = capture();
    const access = new AccessLines(logger);
    access.add({ requestId: 'a' });
    access.write();
    expect(lines().map((l) => l.requestId)).to.deep.equal(['a']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lines()).to.have.length(1);
  });

  it('a logger that throws loses its own lines, not the others of the moment, and never throws out of a timer', async () => {
    const seen: unknown[] = [];
    const throwing: Logger = {
      debug() {},
      warn() {},
      error() {},
      info(_msg, fields) {
        if (fields?.requestId === 'bad') throw new Error('logger broke');
        seen.push(fields?.requestId);
      },
    };
    const access = new AccessLines(throwing);
    access.add({ requestId: 'bad' });
    access.add({ requestId: 'good' });
    await eventually(() => seen.length === 1);
    expect(seen).to.deep.equal(['good']);
  });

  it("a request's line is written by the time the gateway it went through has closed", async () => {
    const upstream = await new FakeOpenAI().start();
    const { logger, lines } = capture();
    const gw = await startGateway(
      {
        keys: [{ key: 'sk-access-lines-test', org: 'acme' }],
        organizations: [{ id: 'acme' }],
        providers: [{ id: 'up', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'upstream-secret-key' }],
        models: [{ name: 'm', provider: 'up' }],
      },
      { logger },
    );
    let requestId: string | null;
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-access-lines-test' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).to.equal(200);
      requestId = res.headers.get('x-gateway-request-id');
      await res.text();
    } finally {
      await gw.close();
      await upstream.stop();
    }
    const requests = lines().filter((l) => l.msg === 'request');
    expect(requests.map((l) => [l.requestId, l.status, l.model, l.org])).to.deep.equal([[requestId, 200, 'm', 'acme']]);
  });
});
