/**
 * Turns the record batches of one fetched partition into what the core sees: data records from the
 * requested offset on, at most `maxRecords` of them, and the offset to read next. fetch-batches.ts
 * does the same for source batches (target.copy "batches"); both give the reader a Slice.
 */
import type { EpochStart, MirrorRecord } from "../../core/model.js";

/** What one fetched partition gives a fetch, in units of records or of source batches. */
export interface Slice<U> {
  readonly units: U[];
  /** Data records the units hold. */
  readonly records: number;
  readonly nextOffset: number;
  /** FetchedRecords.bytes or FetchedBatches.bytes of the units. */
  readonly bytes: number;
  readonly epochs: EpochStart[];
}

/** How much one fetched partition may still give. */
export interface SliceRoom {
  readonly maxRecords: number;
  readonly maxBytes: number;
  /** Nothing was taken yet by this fetch: source batches take the first whatever its size. */
  readonly first: boolean;
}

/** What epochsOf needs of a batch. */
export type EpochView = Pick<BatchView, "baseOffset" | "lastOffset" | "leaderEpoch">;

/** The parts of a decoded record batch this step needs (lib/kafka/codec/record-batch.ts's DecodedBatch). */
export interface BatchView {
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** -1 when the batch carries none (magic 0/1). */
  readonly leaderEpoch: number;
  readonly isControl: boolean;
  readonly records: readonly MirrorRecord[];
}

export interface PartitionSlice {
  readonly records: MirrorRecord[];
  readonly nextOffset: number;
  readonly bytes: number;
  /** FetchedRecords.epochs: of every batch in [offset, nextOffset), aborted and control ones too. */
  readonly epochs: EpochStart[];
}

/**
 * @param all every complete batch the broker returned, in offset order (before aborted
 *   transactions are removed), so `nextOffset` steps over aborted and control batches too.
 * @param visible the same batches after aborted transactions were removed.
 */
export function slicePartition(
  all: readonly BatchView[],
  visible: readonly BatchView[],
  offset: number,
  maxRecords: number,
): PartitionSlice {
  const records: MirrorRecord[] = [];
  let bytes = 0;
  let nextOffset: number | null = null;
  slicing: for (const batch of visible) {
    if (batch.isControl) continue;
    for (const record of batch.records) {
      // Kafka returns whole batches: records before the requested offset were already read.
      if (record.offset < offset) continue;
      if (records.length >= maxRecords) {
        nextOffset = record.offset;
        break slicing;
      }
      records.push(record);
      bytes += recordBytes(record);
    }
  }
  const last = all.at(-1);
  // One past the last batch, which covers control records and offsets removed by compaction.
  nextOffset ??= last === undefined ? offset : Math.max(offset, last.lastOffset + 1);
  return { records, nextOffset, bytes, epochs: epochsOf(all, offset, nextOffset) };
}

/**
 * Where each leader epoch begins among `batches` within [from, to); see FetchedRecords.epochs.
 * The first entry is at `from`; each later one where the batch before it ended, not at its own
 * base offset: compaction may have removed the first batches of an epoch (Kafka's epoch cache
 * still says the epoch began there), and offsets between two batches of different epochs can only
 * have been written by the newer epoch's leader.
 */
export function epochsOf(batches: readonly EpochView[], from: number, to: number): EpochStart[] {
  const epochs: EpochStart[] = [];
  let after = from;
  for (const batch of batches) {
    if (batch.lastOffset < from || batch.baseOffset >= to) continue;
    if (epochs.at(-1)?.epoch !== batch.leaderEpoch) {
      epochs.push({ offset: epochs.length === 0 ? from : after, epoch: batch.leaderEpoch });
    }
    after = batch.lastOffset + 1;
  }
  return epochs;
}

export function recordBytes(record: MirrorRecord): number {
  let size = (record.key?.length ?? 0) + (record.value?.length ?? 0);
  for (const header of record.headers) size += header.key.length + (header.value?.length ?? 0);
  return size;
}
