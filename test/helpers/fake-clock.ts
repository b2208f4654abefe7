/**
 * Virtual time for unit tests (the Clock port), a wait on it, and seeded randomness.
 */
import type { Clock } from "../../lib/core/ports.js";

/**
 * Virtual time. `sleep` registers a wake-up; once everything else is idle (a macrotask turn,
 * since the fakes only ever wait on this clock) time jumps to the earliest wake-up. Tests of
 * hours of worker time run in milliseconds and deterministically.
 */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: { at: number; seq: number; wake: () => void }[] = [];
  #seq = 0;
  #scheduled = false;
  readonly #autoAdvance: boolean;

  constructor(start = 1_700_000_000_000, options: { autoAdvance?: boolean } = {}) {
    this.#now = start;
    this.#autoAdvance = options.autoAdvance ?? true;
  }

  now(): number {
    return this.#now;
  }

  /** Moves time forward by hand and wakes whoever is due. */
  advance(ms: number): void {
    this.#now += ms;
    this.#wakeDue();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        wake: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#sleepers.push(sleeper);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (!this.#autoAdvance || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const next = this.#sleepers.reduce((min, s) => Math.min(min, s.at), Number.POSITIVE_INFINITY);
      if (next === Number.POSITIVE_INFINITY) return;
      this.#now = Math.max(this.#now, next);
      this.#wakeDue();
      if (this.#sleepers.length > 0) this.#schedule();
    });
  }

  #wakeDue(): void {
    const due = this.#sleepers.filter((s) => s.at <= this.#now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now);
    for (const s of due) s.wake();
  }
}

/** Waits on the virtual clock, in 20 ms steps, until `done()`; throws after `limitMs` instead of hanging. */
export async function until(clock: FakeClock, done: () => boolean, limitMs = 600_000): Promise<void> {
  const start = clock.now();
  while (!done()) {
    if (clock.now() - start > limitMs) throw new Error("condition not reached");
    await clock.sleep(20);
  }
}

/** A seeded PRNG (mulberry32) so lease-choice randomness is reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
