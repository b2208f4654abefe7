/**
 * Fetches of one partition, chained: each starts where the last one ended, as soon as the last
 * one is in, while up to `depth` results wait to be taken. The pump writes one result while the
 * next ones are read, so a partition's copy rate is bounded by the slower of reading and
 * writing, not by their sum. Only one fetch of the partition is in flight at a time.
 *
 * What waits is bounded per partition by `depth` and across a worker by a shared byte budget:
 * with the budget spent a chain pauses after its current fetch, until its pump takes a result.
 */
export interface ChainLink<T> {
  /** Where the chain continues after this result; null ends it (stopped, failed). */
  readonly next: number | null;
  /** What the result holds in memory while it waits. */
  readonly bytes: number;
  readonly value: T;
}

/** Bytes of fetched records waiting to be written, across every partition of one worker. */
export class ReadAheadBudget {
  readonly limitBytes: number;
  #used = 0;

  constructor(limitBytes: number) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
      throw new RangeError(`read-ahead budget must be a whole number of bytes >= 0, got ${limitBytes}`);
    }
    this.limitBytes = limitBytes;
  }

  get used(): number {
    return this.#used;
  }

  get spent(): boolean {
    return this.#used >= this.limitBytes;
  }

  take(bytes: number): void {
    this.#used += bytes;
  }

  give(bytes: number): void {
    this.#used -= bytes;
  }
}

interface Waiting<T> {
  readonly link: Promise<ChainLink<T>>;
  /** The result, once it is in. */
  settled: ChainLink<T> | null;
  /** Bytes charged to the budget once the result is in; null before. */
  charged: number | null;
}

export class ReadAhead<T> {
  readonly #fetch: (offset: number) => Promise<ChainLink<T>>;
  readonly #depth: number;
  readonly #budget: ReadAheadBudget | null;
  readonly #queue: Waiting<T>[] = [];
  /** Where the chain paused (depth reached or budget spent); null while it runs or ended. */
  #pausedAt: number | null = null;
  #closed = false;

  constructor(
    fetch: (offset: number) => Promise<ChainLink<T>>,
    start: number,
    depth: number,
    budget: ReadAheadBudget | null = null,
  ) {
    if (!Number.isInteger(depth) || depth < 1)
      throw new RangeError(`read-ahead depth must be >= 1, got ${depth}`);
    this.#fetch = fetch;
    this.#depth = depth;
    this.#budget = budget;
    this.#issue(start);
  }

  /** The oldest result not taken yet, in offset order. */
  next(): Promise<T> {
    const oldest = this.#take();
    return oldest.link.then((link) => {
      this.#release(oldest);
      return link.value;
    });
  }

  /**
   * The oldest result when it is in already and `accept` takes it; else null, and it stays. Its
   * bytes stay charged to the budget until `release`: taken along into a write, it is still held.
   */
  takeReady(accept: (value: T) => boolean): { readonly value: T; release(): void } | null {
    const settled = this.#queue[0]?.settled;
    if (settled == null || !accept(settled.value)) return null;
    const taken = this.#take();
    return { value: settled.value, release: () => this.#release(taken) };
  }

  /**
   * Settles once the oldest result not taken yet is in; null when there is none on its way (it
   * is in already, or the chain paused or ended with nothing waiting), or when the shared budget
   * is spent: taking it would read on past the budget.
   */
  oldestOnItsWay(): Promise<void> | null {
    const oldest = this.#queue[0];
    if (oldest === undefined || oldest.settled !== null || (this.#budget?.spent ?? false)) return null;
    // #issue's callback, registered first, has set `settled` when this one runs.
    return oldest.link.then(() => undefined);
  }

  #take(): Waiting<T> {
    // Resumed first: a chain can pause with nothing waiting (the budget spent when the result
    // its pump had taken already came in), and then the fetch it resumes with is the next one.
    const pausedAt = this.#pausedAt;
    if (pausedAt !== null) {
      this.#pausedAt = null;
      this.#issue(pausedAt);
    }
    const oldest = this.#queue.shift();
    if (oldest === undefined) throw new Error("read-ahead chain has ended");
    return oldest;
  }

  /** Stops the chain; results not taken give their bytes back to the budget. */
  close(): void {
    this.#closed = true;
    this.#pausedAt = null;
    for (const waiting of this.#queue.splice(0)) this.#release(waiting);
  }

  #issue(offset: number): void {
    const waiting: Waiting<T> = { link: this.#fetch(offset), settled: null, charged: null };
    this.#queue.push(waiting);
    void waiting.link.then((link) => {
      waiting.settled = link;
      if (this.#closed) return;
      // Only a result that waits is charged; one its pump took already is being written.
      if (this.#queue.includes(waiting)) {
        waiting.charged = link.bytes;
        this.#budget?.take(link.bytes);
      }
      if (link.next === null) return;
      if (this.#queue.length < this.#depth && !(this.#budget?.spent ?? false)) this.#issue(link.next);
      else this.#pausedAt = link.next;
    });
  }

  #release(waiting: Waiting<T>): void {
    if (waiting.charged !== null) this.#budget?.give(waiting.charged);
    waiting.charged = null;
  }
}
