/**
 * Answer buffers used again once the source batches read from them are written (target.copy
 * "batches"). Every fetched megabyte was a new buffer outside V8's heap, and V8 runs a full
 * collection for about every 64 MiB of those (README "Copy modes"); a buffer that comes back is
 * not a new allocation.
 *
 * A buffer comes back only when everything that may still read it said it is done:
 *  - framed-socket.ts takes each large answer's buffer here (`take`);
 *  - the fetch coalescer holds it once for each partition it hands the answer's records to
 *    (`hold`), before any caller runs;
 *  - the batches reader trades its partition's hold for one count per source batch it returns
 *    that lies in the buffer (`adopt`);
 *  - the target writer drops the counts of batches once a write committed them all, its base
 *    offset known (`done`), and each produce request's parts are counted while queued on their
 *    socket (`pin`).
 * A batch's bytes are read after its write only where the write did not give them back: a lazy
 * contentCrc (SourceReader.contentCrc) of the look is asked of units not yet written whole.
 * Whoever never gives back what it holds (a records-mode read, a failed fetch, a write not
 * committed whole, a batch dropped) leaves the buffer to the garbage collector, as before: a miss
 * costs a reuse, never bytes. A batch is counted once (`adopt` and `done` look it up by object),
 * so a second `done` of it does nothing.
 *
 * KAFKA_MIRROR_ANSWER_POOL: unset or "on"; "off" allocates every answer afresh; "poison" (the
 * tests) pools answers of every size and overwrites each buffer as it comes back, so a read after
 * `done` sends bytes whose CRC fails and copies that differ, instead of passing unseen.
 */
import { ReplicatorError } from "../../errors.js";

export const ANSWER_POOL_VARIABLE = "KAFKA_MIRROR_ANSWER_POOL";

export type AnswerPoolMode = "on" | "off" | "poison";

/** Answers smaller than this share node's slab (Buffer.allocUnsafe) and are not pooled. */
export const MIN_POOLED_BYTES = 64 * 1024;
/** Larger answers (a combined fetch of many partitions) are rare: allocated afresh. */
export const MAX_POOLED_BYTES = 16 * 1024 * 1024;
/** Free buffers kept at most, over all sizes: beyond it a returned buffer is left to the collector. */
export const MAX_FREE_BYTES = 32 * 1024 * 1024;
/**
 * A free buffer up to this many times an answer's size class may hold it when none of its own
 * class is free. Answers come in many sizes (one partition's megabyte, a combined fetch of
 * several up to 4 MiB): with exact classes only, `bench --copy batches` took 178 new buffers and
 * left 154 given back to the collector (the free bytes full of classes no answer asked for);
 * with up to twice the class, 57 and 34. A buffer out then holds at most 2.5 times its answer.
 */
export const LARGER_CLASS_FACTOR = 2;
/** What a returned buffer is overwritten with in "poison" mode. */
export const POISON_BYTE = 0xee;

/** A pooled buffer while it is out: counts of partitions and batches that may still read it. */
interface Slot {
  readonly whole: Buffer;
  refs: number;
}

/** A source batch as the pool sees it: its bytes lie in some answer. */
export interface PooledUnit {
  readonly bytes: Buffer;
}

export class AnswerPool {
  readonly mode: AnswerPoolMode;
  /** Free buffers by size class. */
  readonly #free = new Map<number, Buffer[]>();
  #freeBytes = 0;
  /** Buffers out, by their memory: a view's `buffer` finds its slot. */
  readonly #out = new WeakMap<ArrayBufferLike, Slot>();
  /** Batches counted in a slot's refs. */
  readonly #adopted = new WeakSet<PooledUnit>();
  /** Buffers taken from the free lists, allocated for the pool, and given back: tests, bench. */
  reused = 0;
  allocated = 0;
  returned = 0;

  constructor(mode: AnswerPoolMode) {
    this.mode = mode;
  }

  /** A buffer of exactly `size` bytes for one answer (a view of a pooled one when large). */
  take(size: number): Buffer {
    // Poison pools every size, so that the tests' small answers go through it too.
    const min = this.mode === "poison" ? 4 : MIN_POOLED_BYTES;
    if (this.mode === "off" || size < min || size > MAX_POOLED_BYTES) {
      return Buffer.allocUnsafe(size);
    }
    const sizeClass = sizeClassOf(size);
    const list = this.#freeList(sizeClass);
    let whole = list?.pop();
    if (whole === undefined) {
      whole = Buffer.allocUnsafeSlow(sizeClass);
      this.allocated++;
    } else {
      this.#freeBytes -= whole.length;
      this.reused++;
    }
    this.#out.set(whole.buffer, { whole, refs: 0 });
    return whole.subarray(0, size);
  }

  /** Free buffers of `sizeClass`, else of the smallest larger class within LARGER_CLASS_FACTOR. */
  #freeList(sizeClass: number): Buffer[] | undefined {
    let best: Buffer[] | undefined;
    let bestClass = Number.POSITIVE_INFINITY;
    // A handful of classes: answers range over a few powers of two.
    for (const [freeClass, list] of this.#free) {
      if (list.length === 0 || freeClass < sizeClass || freeClass >= bestClass) continue;
      if (freeClass > sizeClass * LARGER_CLASS_FACTOR) continue;
      best = list;
      bestClass = freeClass;
    }
    return best;
  }

  /** One partition's records of an answer are handed to a caller that may read them. */
  hold(records: Buffer): void {
    const slot = this.#out.get(records.buffer);
    if (slot !== undefined) slot.refs++;
  }

  /**
   * The caller a partition's `records` went to keeps `units` (those in the same answer) and
   * nothing else of it: its hold becomes one count per unit.
   */
  adopt(records: Buffer, units: readonly PooledUnit[]): void {
    const slot = this.#out.get(records.buffer);
    if (slot === undefined) return;
    for (const unit of units) {
      if (unit.bytes.buffer === records.buffer && !this.#adopted.has(unit)) {
        this.#adopted.add(unit);
        slot.refs++;
      }
    }
    this.#drop(records.buffer, slot);
  }

  /**
   * `bytes` are queued on a socket: node reads them until the kernel took them, which for a
   * request that timed out on a stalled connection may be after its resend elsewhere landed and
   * `done` ran. Returns the write's callback that ends the pin (node calls it also when the socket
   * is destroyed), or undefined when the bytes lie in no buffer that is out.
   */
  pin(bytes: Uint8Array): (() => void) | undefined {
    const slot = this.#out.get(bytes.buffer);
    if (slot === undefined) return undefined;
    slot.refs++;
    let pinned = true;
    return () => {
      if (pinned) this.#drop(bytes.buffer, slot);
      pinned = false;
    };
  }

  /** `units` were written and committed: nothing reads their bytes again. */
  done(units: readonly PooledUnit[]): void {
    for (const unit of units) {
      if (!this.#adopted.delete(unit)) continue;
      const slot = this.#out.get(unit.bytes.buffer);
      if (slot !== undefined) this.#drop(unit.bytes.buffer, slot);
    }
  }

  #drop(memory: ArrayBufferLike, slot: Slot): void {
    // A slot given back already counts nothing: its memory may be out again under a new one.
    if (this.#out.get(memory) !== slot) return;
    slot.refs--;
    if (slot.refs > 0) return;
    this.#out.delete(memory);
    this.returned++;
    const sizeClass = slot.whole.length;
    if (this.mode === "poison") slot.whole.fill(POISON_BYTE);
    if (this.#freeBytes + sizeClass > MAX_FREE_BYTES) return;
    const list = this.#free.get(sizeClass) ?? [];
    list.push(slot.whole);
    this.#free.set(sizeClass, list);
    this.#freeBytes += sizeClass;
  }
}

/** `size` rounded up to a quarter of its power of two: at most a quarter more than asked. */
export function sizeClassOf(size: number): number {
  const step = 2 ** (Math.floor(Math.log2(size)) - 2);
  return Math.ceil(size / step) * step;
}

/** The variable's mode; CONFIG_INVALID for any other value (a misspelt "off" would measure "on"). */
export function answerPoolMode(value: string | undefined): AnswerPoolMode {
  if (value === undefined || value === "" || value === "on") return "on";
  if (value === "off" || value === "poison") return value;
  throw new ReplicatorError(
    "CONFIG_INVALID",
    `invalid ${ANSWER_POOL_VARIABLE}: ${JSON.stringify(value)}; "on" (or unset), "off" or "poison"`,
    { details: { issues: [{ path: ANSWER_POOL_VARIABLE, message: "must be on, off, poison or empty" }] } },
  );
}

/** The process's pool: every socket's answers and every reader and writer share it. */
export const answerPool = new AnswerPool(answerPoolMode(process.env[ANSWER_POOL_VARIABLE]));
