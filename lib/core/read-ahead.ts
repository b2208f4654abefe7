/**
 * Fetches of one partition, chained: each starts where the last one ended, as soon as the last
 * one is in, while up to `depth` results wait to be taken. The pump writes one result while the
 * next ones are read, so a partition's copy rate is bounded by the slower of reading and
 * writing, not by their sum. Only one fetch of the partition is in flight at a time.
 */
export type ChainLink<T> =
  /** A result the chain continues after, from `nextOffset`. */
  | { readonly next: number; readonly value: T }
  /** A result that ends the chain (stopped, failed). */
  | { readonly next: null; readonly value: T };

export class ReadAhead<T> {
  readonly #fetch: (offset: number) => Promise<ChainLink<T>>;
  readonly #depth: number;
  readonly #queue: Promise<ChainLink<T>>[] = [];
  /** Where the chain paused because `depth` results were waiting; null while it runs or ended. */
  #pausedAt: number | null = null;

  constructor(fetch: (offset: number) => Promise<ChainLink<T>>, start: number, depth: number) {
    if (!Number.isInteger(depth) || depth < 1)
      throw new RangeError(`read-ahead depth must be >= 1, got ${depth}`);
    this.#fetch = fetch;
    this.#depth = depth;
    this.#issue(start);
  }

  /** The oldest result not taken yet, in offset order. */
  next(): Promise<T> {
    const oldest = this.#queue.shift();
    if (oldest === undefined) throw new Error("read-ahead chain has ended");
    const pausedAt = this.#pausedAt;
    if (pausedAt !== null) {
      this.#pausedAt = null;
      this.#issue(pausedAt);
    }
    return oldest.then((link) => link.value);
  }

  #issue(offset: number): void {
    const link = this.#fetch(offset);
    this.#queue.push(link);
    void link.then(({ next }) => {
      if (next === null) return;
      if (this.#queue.length < this.#depth) this.#issue(next);
      else this.#pausedAt = next;
    });
  }
}
