import type { ServerResponse } from 'node:http';

/**
 * Call `gone` once if the client goes away before its answer is finished, and at once if it already has.
 * Routes start listening after an await (the key check, the body), and a socket that closed during that
 * await has already emitted its 'close': a listener alone would wait for an event that never comes, and
 * the request would run (and be billed) for nobody. Returns what stops listening.
 */
export function onClientGone(res: ServerResponse, gone: () => void): () => void {
  const onClose = () => {
    if (!res.writableFinished) gone();
  };
  if (res.destroyed) {
    onClose();
    return () => {};
  }
  res.on('close', onClose);
  return () => res.off('close', onClose);
}
