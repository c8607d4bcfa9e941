/**
 * A signal for one upstream step (a model round, a tool call, a discovery page, one message of a batch)
 * that follows the request's signal. Libraries that never remove their abort listeners (the MCP SDK's
 * Client.request) then leave them on the step's signal, which is dropped after the step, instead of
 * piling them on the request's.
 */
export interface ChildSignal {
  signal: AbortSignal;
  /** unlink from the parent once the step is over */
  release(): void;
  /** end this step alone (a client cancelled it), the parent going on */
  abort(): void;
}

export function childSignal(parent: AbortSignal): ChildSignal {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined, abort: () => undefined };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', onAbort), abort: () => controller.abort() };
}
