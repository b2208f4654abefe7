/**
 * Reads one partition range [from, to) in order through a SourceReader, a few units ahead of the
 * caller, so a comparison can look one unit past a difference without holding a whole partition
 * in memory. A unit is a record (SourceReader.fetch), or in target.copy "batches" a batch
 * (fetchBatches); recordCursor and batchCursor make one of each.
 */

import { withContentCrcs } from "../core/content-crc.js";
import type {
  FetchedBatches,
  FetchedRecords,
  FetchLimits,
  MirrorRecord,
  SourceBatch,
  TopicPartition,
} from "../core/model.js";
import type { SourceReader } from "../core/ports.js";
import type { Mismatch } from "./model.js";

const LIMITS: FetchLimits = { maxRecords: 10_000, maxBytes: 4 << 20, maxWaitMs: 0 };

/** One fetch as a cursor sees it: its units, and FetchProgress's nextOffset and highWatermark. */
interface Fetched<T> {
  readonly units: readonly T[];
  readonly nextOffset: number;
  readonly highWatermark: number;
}

export class PartitionCursor<T> {
  readonly #read: (offset: number, limits: FetchLimits) => Promise<Fetched<T>>;
  readonly #tp: TopicPartition;
  #to: number;
  #nextOffset: number;
  #buffer: T[] = [];
  /** Index of the next unit in #buffer (shift() would make reading quadratic). */
  #head = 0;
  /** Where a unit begins: units from `to` on are not part of the range. */
  readonly #offsetOf: (unit: T) => number;

  constructor(
    read: (offset: number, limits: FetchLimits) => Promise<Fetched<T>>,
    tp: TopicPartition,
    range: { readonly from: number; readonly to: number },
    offsetOf: (unit: T) => number,
  ) {
    this.#read = read;
    this.#tp = tp;
    this.#nextOffset = range.from;
    this.#to = range.to;
    this.#offsetOf = offsetOf;
  }

  /** The unit `ahead` places after the next one (0: the next), or undefined past the range's end. */
  async peek(ahead = 0): Promise<T | undefined> {
    while (this.#buffer.length - this.#head <= ahead && this.#nextOffset < this.#to) {
      this.#buffer = this.#buffer.slice(this.#head);
      this.#head = 0;
      const fetched = await this.#read(this.#nextOffset, LIMITS);
      if (fetched.nextOffset <= this.#nextOffset && fetched.highWatermark <= this.#nextOffset) {
        // Read read_committed, the readable end is the last stable offset: records behind a
        // transaction still open are not committed (yet), so the comparison ends here.
        this.#to = this.#nextOffset;
        break;
      }
      if (fetched.nextOffset <= this.#nextOffset) {
        throw new Error(
          `no progress reading ${this.#tp.topic}/${this.#tp.partition} at offset ${this.#nextOffset}`,
        );
      }
      // Units appended after the range was fixed are not part of this comparison.
      for (const unit of fetched.units) if (this.#offsetOf(unit) < this.#to) this.#buffer.push(unit);
      this.#nextOffset = fetched.nextOffset;
    }
    return this.#buffer[this.#head + ahead];
  }

  async next(): Promise<T | undefined> {
    const unit = await this.peek();
    if (unit !== undefined) this.#head++;
    return unit;
  }
}

/** The records of [from, to); `map` rewrites each as it is read (verify drops the mirror's own header). */
export function recordCursor(
  reader: SourceReader,
  tp: TopicPartition,
  range: { readonly from: number; readonly to: number },
  map: (record: MirrorRecord) => MirrorRecord = (r) => r,
): PartitionCursor<MirrorRecord> {
  const read = async (offset: number, limits: FetchLimits) => {
    const fetched: FetchedRecords = await reader.fetch(tp, offset, limits);
    return { ...fetched, units: fetched.records.map(map) };
  };
  return new PartitionCursor(read, tp, range, (r) => r.offset);
}

/** The data batches that begin in [from, to) (target.copy "batches"). */
export function batchCursor(
  reader: SourceReader,
  tp: TopicPartition,
  range: { readonly from: number; readonly to: number },
): PartitionCursor<SourceBatch> {
  const read = async (offset: number, limits: FetchLimits) => {
    const fetched: FetchedBatches = await withContentCrcs(
      reader,
      await reader.fetchBatches(tp, offset, limits),
    );
    return { ...fetched, units: fetched.batches };
  };
  return new PartitionCursor(read, tp, range, (b) => b.baseOffset);
}

/**
 * Walks both sides to their ends in step, unit against unit, each unit added to its side's
 * digest; `differs` is asked of each pair until it names the first difference (null: the same).
 * `previous` is the last source unit before the pair.
 */
export async function walkInStep<T>(
  left: PartitionCursor<T>,
  right: PartitionCursor<T>,
  digests: { readonly left: { add(unit: T): void }; readonly right: { add(unit: T): void } },
  differs: (s: T | undefined, t: T | undefined, previous: T | undefined) => Promise<Mismatch | null>,
): Promise<Mismatch | null> {
  let mismatch: Mismatch | null = null;
  let previous: T | undefined;
  for (;;) {
    const s = await left.peek();
    const t = await right.peek();
    if (s === undefined && t === undefined) return mismatch;
    mismatch ??= await differs(s, t, previous);
    if (s !== undefined) digests.left.add(s);
    if (t !== undefined) digests.right.add(t);
    previous = s ?? previous;
    await left.next();
    await right.next();
  }
}
