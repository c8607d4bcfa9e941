/**
 * What `work` settles with, or what `late()` returns (or throws) once `ms` have passed without it: the
 * one way the gateway bounds a wait on something that may never answer (a frozen store, a silent
 * upstream, an engine that hangs). `work` itself is not stopped, as a promise cannot be; a caller that
 * can call it off does so in `late`, and one that must know how it ended after all keeps `work`.
 *
 * When the timer fires, the answer may be waiting unread behind a busy event loop (timers run before I/O
 * in a loop turn): one setImmediate lets that turn's I/O in first, so only work that really has not
 * answered is late, not work whose answer a busy gateway has not read yet. The timer is unref'd: it never
 * keeps a process alive on its own (the work it bounds does, if anything does).
 */
export function settleWithin<T, L>(work: PromiseLike<T>, ms: number, late: () => L): Promise<T | L> {
  return new Promise<T | L>((resolve, reject) => {
    let settled = false;
    const expire = () => {
      if (settled) return;
      settled = true;
      try {
        resolve(late());
      } catch (err) {
        reject(err);
      }
    };
    const timer = setTimeout(() => setImmediate(expire), ms);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        reject(err);
      },
    );
  });
}
