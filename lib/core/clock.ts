import type { Clock } from "./ports.js";

/**
 * Real time. `sleep` resolves early, without throwing, when the signal aborts. Even a sleep of
 * 0 (or an aborted one) resolves from a macrotask, after pending I/O callbacks: a loop that
 * sleeps until a time already past must not spin on resolved promises and starve the process's
 * sockets and timers (a run loop did, for seconds; see TopicWatch.nextAt).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted || ms <= 0) {
        setImmediate(resolve);
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
    }),
};
