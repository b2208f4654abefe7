/**
 * Reads one partition range [from, to) in order through a SourceReader, a few records ahead of
 * the caller, so a comparison can look one record past a difference without holding a whole
 * partition in memory.
 */
import type { FetchLimits, MirrorRecord, TopicPartition } from "../core/model.js";
import type { SourceReader } from "../core/ports.js";

const LIMITS: FetchLimits = { maxRecords: 10_000, maxBytes: 4 << 20, maxWaitMs: 0 };

export class PartitionCursor {
  readonly #reader: SourceReader;
  readonly #tp: TopicPartition;
  #to: number;
  #nextOffset: number;
  #buffer: MirrorRecord[] = [];
  /** Index of the next record in #buffer (shift() would make reading quadratic). */
  #head = 0;
  readonly #map: (record: MirrorRecord) => MirrorRecord;

  /** `map` rewrites each record as it is read (verify drops the mirror's own header). */
  constructor(
    reader: SourceReader,
    tp: TopicPartition,
    from: number,
    to: number,
    map: (record: MirrorRecord) => MirrorRecord = (r) => r,
  ) {
    this.#map = map;
    this.#reader = reader;
    this.#tp = tp;
    this.#nextOffset = from;
    this.#to = to;
  }

  /** The record `ahead` places after the next one (0: the next), or undefined past the range's end. */
  async peek(ahead = 0): Promise<MirrorRecord | undefined> {
    while (this.#buffer.length - this.#head <= ahead && this.#nextOffset < this.#to) {
      this.#buffer = this.#buffer.slice(this.#head);
      this.#head = 0;
      const fetched = await this.#reader.fetch(this.#tp, this.#nextOffset, LIMITS);
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
      // Records appended after the range was fixed are not part of this comparison.
      for (const record of fetched.records)
        if (record.offset < this.#to) this.#buffer.push(this.#map(record));
      this.#nextOffset = fetched.nextOffset;
    }
    return this.#buffer[this.#head + ahead];
  }

  async next(): Promise<MirrorRecord | undefined> {
    const record = await this.peek();
    if (record !== undefined) this.#head++;
    return record;
  }
}
