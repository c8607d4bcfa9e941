/**
 * Preloaded (`node --require`) into a third-party server we start in tests, which listens on every
 * interface and logs the port it was asked for rather than the one it got: this binds it to 127.0.0.1
 * and prints `LISTENING <port>` on stderr once it listens.
 */
import net from 'node:net';

const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: any[]) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const port = Number(args[0]);
    const callback = args.find((a) => typeof a === 'function');
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') process.stderr.write(`LISTENING ${address.port}\n`);
    });
    return (originalListen as any).call(this, port, '127.0.0.1', callback);
  }
  return originalListen.apply(this, args as any);
} as typeof net.Server.prototype.listen;
