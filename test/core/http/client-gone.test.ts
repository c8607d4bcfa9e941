import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onClientGone } from '../../../core/http/client-gone';

/** Each test's server: what it does with a request once it arrives. */
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

describe('onClientGone: a client that goes away, before or after a route starts listening', () => {
  let server: http.Server;
  let url: string;
  let handler: Handler;

  before(async () => {
    server = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Send a request whose body never completes, and go away once it has left. */
  function sendAndLeave(): Promise<void> {
    return new Promise<void>((resolve) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-length': '100' } });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write('partial', () => setImmediate(() => req.destroy()));
    });
  }

  it('tells at once when the client left before the route listened (its close event has passed)', async () => {
    const calls: string[] = [];
    handler = (req, res) => {
      // as a route that listens only after an await (the key check) would
      req.once('close', () => setImmediate(() => onClientGone(res, () => calls.push('gone'))));
    };
    await sendAndLeave();
    for (let i = 0; i < 200 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(calls).to.deep.equal(['gone']);
  });

  it('tells once when the client leaves while the route listens', async () => {
    const calls: string[] = [];
    handler = (_req, res) => void onClientGone(res, () => calls.push('gone'));
    await sendAndLeave();
    for (let i = 0; i < 200 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).to.deep.equal(['gone']);
  });

  it('says nothing when the answer was finished, or after the route stopped listening', async () => {
    const calls: string[] = [];
    handler = (req, res) => {
      onClientGone(res, () => calls.push('finished answer'));
      req.resume();
      req.on('end', () => res.end('ok'));
    };
    expect(await (await fetch(url, { method: 'POST', body: 'x' })).text()).to.equal('ok');

    let closed!: () => void;
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
    handler = (_req, res) => {
      onClientGone(res, () => calls.push('after stop'))();
      res.on('close', closed);
    };
    await sendAndLeave();
    await serverSawClose;
    expect(calls).to.deep.equal([]);
  });
});
