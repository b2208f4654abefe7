/**
 * Terms (pumps) that ended, queued for the run loop, which reaps them: hands the lease over to
 * the worker that asked for it, or keeps it for release. Each push wakes the loop from its
 * sleep, so a lease whose pump stopped for a handoff is handed over at once, not at the loop's
 * next timed wake (up to a rebalance interval later, all that time with nobody copying).
 */
export class EndedTerms<T> {
  #items: T[] = [];
  #wake = new AbortController();

  push(term: T): void {
    this.#items.push(term);
    this.#wake.abort();
  }

  includes(term: T): boolean {
    return this.#items.includes(term);
  }

  /** Every term queued so far; a term that ends from now on wakes the next sleep. */
  take(): T[] {
    if (this.#wake.signal.aborted) this.#wake = new AbortController();
    return this.#items.splice(0);
  }

  /** For the loop's sleep: aborted by `signal` (the run's) or once a term ends. */
  wakeSignal(signal: AbortSignal | undefined): AbortSignal {
    return signal === undefined ? this.#wake.signal : AbortSignal.any([signal, this.#wake.signal]);
  }
}
